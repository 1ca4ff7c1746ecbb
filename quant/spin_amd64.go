//go:build !purego

package quant

// spinPause is one PAUSE: a spin loop's hint that frees the core's shared
// resources for its sibling thread.
//
//go:noescape
func spinPause()
