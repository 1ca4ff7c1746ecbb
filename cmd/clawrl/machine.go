package main

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/clawrl/clawrl/blas"
	"github.com/clawrl/clawrl/quant"
)

// machineInfo is what a run's bits depend on besides the binary and its
// flags: the CPU and the kernels its products run on. Runs of `bench learn`
// with the same flags and seeds repeat each other answer for answer on one
// binary only where these match: on an Intel Xeon with AMX the bf16
// backward runs on tiles ("amx") and its runs part from a Zen 4's
// ("vdpbf16ps") at the first step, though neither is the more precise
// (BENCHMARKS.md, "The six-seed pool on AMX tiles").
type machineInfo struct {
	// CPU is the first processor's model name as Linux reports it; ""
	// where /proc/cpuinfo is not there.
	CPU string `json:"cpu,omitempty"`
	// Threads is GOMAXPROCS; Arch GOOS/GOARCH.
	Threads int    `json:"threads"`
	Arch    string `json:"arch"`
	// Sgemm, BF16 and Quant name the float32 products' kernels
	// (blas.SgemmKernel), the bf16 backward's (blas.BF16Kernel) and the
	// quantized products' (quant.Kernels).
	Sgemm string `json:"sgemm"`
	BF16  string `json:"bf16"`
	Quant string `json:"quant"`
}

// thisMachine describes the machine and kernels of this process.
func thisMachine() machineInfo {
	return machineInfo{CPU: cpuModel("/proc/cpuinfo"), Threads: runtime.GOMAXPROCS(0), Arch: runtime.GOOS + "/" + runtime.GOARCH,
		Sgemm: blas.SgemmKernel(), BF16: blas.BF16Kernel(), Quant: quant.Kernels()}
}

// Kernels is the kernels in one line: "sgemm go/avx512, bf16 amx, quant avx512+vnni+amx-int8".
func (m machineInfo) Kernels() string {
	return fmt.Sprintf("sgemm %s, bf16 %s, quant %s", m.Sgemm, m.BF16, m.Quant)
}

// String is the CPU, its threads and the kernels in one line.
func (m machineInfo) String() string {
	cpu := m.CPU
	if cpu == "" {
		cpu = m.Arch
	}
	return fmt.Sprintf("%s, %d threads (%s)", cpu, m.Threads, m.Kernels())
}

// cpuModel reads the first "model name" of a /proc/cpuinfo file; "" when
// the file or the line is not there.
func cpuModel(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.Join(strings.Fields(v), " ")
		}
	}
	return ""
}
