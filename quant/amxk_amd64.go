//go:build !purego

package quant

import (
	"os"

	"github.com/clawrl/clawrl/blas"
	"golang.org/x/sys/cpu"
)

// hasAMXInt8: Q4_K and Q6_K products of sixteen tokens and more run on
// AMX-INT8 tiles (amxk_amd64.s, written by amxk_gen.go) where the CPU has
// AMX-TILE and AMX-INT8 beside the AVX-512 VNNI kernels and Linux lets
// the process use the tile data. CLAWRL_AMX=0 turns it off (as in blas),
// and so does CLAWRL_AVX512=0.
var hasAMXInt8 = hasVNNI && hasAVX512 && cpu.X86.HasAMXTile && cpu.X86.HasAMXInt8 && os.Getenv("CLAWRL_AMX") != "0" && blas.AMXPermitted()

//go:noescape
func prepQ4KAMX(nb int, w *byte, gstride int, dst *byte)

//go:noescape
func gemmQ4KAMX(tiles int, prep *byte, qs *int8, ldq int, ds *float32, ldd int, sums *int16, lds int, out *float32, ldo int, ctmp *byte, cfg *byte)

//go:noescape
func prepQ6KAMX(nb int, w *byte, gstride int, dst *byte)

//go:noescape
func gemmQ6KAMX(tiles int, prep *byte, qs *int8, ldq int, ds *float32, ldd int, sums *int16, lds int, out *float32, ldo int, ctmp *byte, cfg *byte)
