//go:build !linux

package train

// totalMemory is the machine's physical memory in bytes, 0 if unknown.
func totalMemory() int64 { return 0 }
