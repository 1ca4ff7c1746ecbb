//go:build !linux

package quant

// releasePages is a no-op where madvise is not wired up.
func releasePages(b []byte) {}
