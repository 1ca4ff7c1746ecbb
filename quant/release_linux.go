package quant

import "syscall"

// releasePages drops the whole pages of b from this process's resident
// set (madvise MADV_DONTNEED). b must be a read-only file mapping: its
// pages stay in the page cache and fault back in, unchanged, when read
// again (on anonymous memory the call would zero them).
func releasePages(b []byte) {
	page := syscall.Getpagesize()
	if len(b) < page {
		return
	}
	addr := uintptrOf(b)
	off := (page - int(addr%uintptr(page))) % page
	n := (len(b) - off) / page * page
	if n > 0 {
		_ = syscall.Madvise(b[off:off+n], syscall.MADV_DONTNEED) // advice only: on failure the pages stay
	}
}
