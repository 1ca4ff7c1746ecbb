//go:build !linux || !amd64 || purego

package blas

const useAMX = false

// AMXPermitted reports whether this process may use AMX tiles: never on
// this platform or build.
func AMXPermitted() bool { return false }

func kernAMX32x48(ks int, a *uint16, lda int, bp *uint32, c *float32, ldc int, acc int, cfg *byte) {
	panic("blas: no AMX kernel")
}

func setUseAMX(bool) {}
