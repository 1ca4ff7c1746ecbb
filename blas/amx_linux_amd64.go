//go:build !purego

package blas

import (
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/cpu"
)

// useAMX selects the AMX tile kernel (kernAMX32x48) for GemmBF16's groups
// of 32 rows over blocks of 16·j pairs: the CPU has AMX-TILE and AMX-BF16 beside
// AVX512_BF16 (which runs the rest), and Linux lets the process use the
// tile data (arch_prctl ARCH_REQ_XCOMP_PERM, Linux 5.16 on). CLAWRL_AMX=0
// turns it off.
var useAMX = useBF16 && cpu.X86.HasAMXTile && cpu.X86.HasAMXBF16 && os.Getenv("CLAWRL_AMX") != "0" && AMXPermitted()

// AMXPermitted reports whether Linux lets this process use the AMX tile
// data (asked once; quant's AMX-INT8 kernels ask here too).
func AMXPermitted() bool { return amxPermitted() }

var amxPermitted = sync.OnceValue(requestAMX)

// requestAMX asks Linux for the tile data state (XFEATURE_XTILEDATA, 18);
// without it the first tile instruction faults.
func requestAMX() bool {
	const archReqXcompPerm, xfeatureXtiledata = 0x1023, 18
	_, _, errno := syscall.RawSyscall(syscall.SYS_ARCH_PRCTL, archReqXcompPerm, xfeatureXtiledata, 0)
	return errno == 0
}

//go:noescape
func kernAMX32x48(ks int, a *uint16, lda int, bp *uint32, c *float32, ldc int, acc int, cfg *byte)

func setUseAMX(v bool) { useAMX = v }
