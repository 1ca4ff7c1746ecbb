// Package mmap maps model files (safetensors, GGUF) read-only into memory,
// so weights are paged in on use and shared with the page cache.
package mmap
