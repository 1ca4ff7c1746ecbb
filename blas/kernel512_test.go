package blas

import (
	"fmt"
	"math"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"
)

// cpuSeconds is the CPU time (user + system) this process has used: on a
// shared machine the wall clock counts other people's work too.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// The AVX-512 kernels compute the AVX2 kernels' sums bitwise: every Sgemm
// the training step runs (x·Wᵀ forward and logits, dy·W and dyᵀ·x
// backward, accumulating or not, edge rows and columns, split across
// goroutines) gives the same bits with them on and off.
func TestAVX512KernelsMatchAVX2(t *testing.T) {
	if !use512 {
		t.Skip("no AVX-512 (or CLAWRL_AVX512=0): the AVX2 kernels run everywhere")
	}
	defer func(v bool) { use512 = v }(use512)
	rng := rand.New(rand.NewPCG(5, 12))
	fill := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		return x
	}
	type shape struct{ m, n, k int }
	shapes := []shape{{4, 6, 8}, {7, 13, 16}, {64, 96, 576}, {37, 50, 64}, {130, 200, 48}, {9, 1536, 576}, {190, 576, 1536}, {3, 47, 24}, {61, 1536, 16}, {40, 192, 16}, {18, 100, 40}, {131, 16, 576}, {70, 20, 24}, {16, 64, 8}, {3040, 16, 576}, {301, 130, 1536},
		// The student's dx shapes (packed 8×48 path): 4,864 = 101·48 + 16 columns, k off the 128-row blocks.
		{150, 4864, 136}, {333, 896, 300},
		// The packed forward's six-row groups followed by two four-row groups (152 rows; 104 in blocks of 24, the last of 8) and by one (100 rows).
		{152, 104, 64}, {104, 96, 2048}, {100, 96, 8},
		// LoRA's 16-row products (dA = gᵀ·x, dBᵀ = (s·u)ᵀ·dy: transposed A, kernOP16x16T512): k across the 256-row blocks, a partial last strip.
		{16, 576, 3040}, {16, 200, 300}, {16, 16, 1}, {16, 1552, 257}}
	for _, sh := range shapes {
		for _, tr := range [][2]bool{{false, true}, {false, false}, {true, false}} {
			// alpha ≠ 1 and beta ∉ {0, 1}: LoRA's out += scale·(u·Bᵀ) (k = r).
			for _, ab := range [][2]float32{{1, 0}, {1, 1}, {2, 1}, {0.37, 0}, {0.37, 0.5}} {
				alpha, beta := ab[0], ab[1]
				ar, ac := sh.m, sh.k
				if tr[0] {
					ar, ac = sh.k, sh.m
				}
				br, bc := sh.k, sh.n
				if tr[1] {
					br, bc = sh.n, sh.k
				}
				a, b, c0 := fill(ar*ac), fill(br*bc), fill(sh.m*sh.n)
				run := func(wide bool) []float32 {
					use512 = wide
					c := append([]float32(nil), c0...)
					SgemmGo(tr[0], tr[1], sh.m, sh.n, sh.k, alpha, a, ac, b, bc, beta, c, sh.n)
					return c
				}
				want, got := run(false), run(true)
				for i := range want {
					if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
						t.Fatalf("m=%d n=%d k=%d trans=%v alpha=%v beta=%v: element %d: AVX-512 %v, AVX2 %v", sh.m, sh.n, sh.k, tr, alpha, beta, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// BenchmarkTrainShapes times the SmolLM2-135M training step's two big
// products (3,040 tokens: the up projection's x·Wᵀ and its backward dy·W)
// with the AVX-512 kernels and with AVX2 (CLAWRL_AVX512=0); forward-xWt-4x6
// is the forward without the packed kernel (kern4x6C512 on A in place), the
// same sums:
//
//	go test ./blas -run '^$' -bench TrainShapes -benchtime 5x
func BenchmarkTrainShapes(b *testing.B) {
	const m, n, k = 3040, 1536, 576
	x, w, dy := make([]float32, m*k), make([]float32, n*k), make([]float32, m*n)
	for i := range w {
		w[i] = float32(i%7) * 0.01
	}
	out, dx := make([]float32, m*n), make([]float32, m*k)
	b.Run("forward-xWt", func(b *testing.B) {
		c0 := cpuSeconds()
		for range b.N {
			SgemmGo(false, true, m, n, k, 1, x, k, w, k, 0, out, n)
		}
		b.ReportMetric(2*m*n*k*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOPS")
		b.ReportMetric(2*m*n*k*float64(b.N)/(cpuSeconds()-c0)/1e9, "GFLOP/cpu-s")
	})
	b.Run("forward-xWt-4x6", func(b *testing.B) {
		defer func(v bool) { usePack512 = v }(usePack512)
		usePack512 = false
		c0 := cpuSeconds()
		for range b.N {
			SgemmGo(false, true, m, n, k, 1, x, k, w, k, 0, out, n)
		}
		b.ReportMetric(2*m*n*k*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOPS")
		b.ReportMetric(2*m*n*k*float64(b.N)/(cpuSeconds()-c0)/1e9, "GFLOP/cpu-s")
	})
	b.Run("backward-dyW", func(b *testing.B) {
		c0 := cpuSeconds()
		for range b.N {
			SgemmGo(false, false, m, k, n, 1, dy, n, w, k, 1, dx, k)
		}
		b.ReportMetric(2*m*n*k*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOPS")
		b.ReportMetric(2*m*n*k*float64(b.N)/(cpuSeconds()-c0)/1e9, "GFLOP/cpu-s")
	})
	// The same dx = dy·W in bf16 (GemmBF16; W packed once, outside the
	// timing, as the trainer keeps it), and the down projection's shape.
	for _, sh := range []struct {
		name string
		k, n int
		skip bool
		tok  int
	}{{"backward-dyW-bf16", n, k, false, m}, {"backward-dyW-bf16-down", k, n, false, m}, {"backward-dzW-bf16-head", 12288, k, false, 2016}} {
		b.Run(sh.name, func(b *testing.B) {
			if !useBF16 && !useBF16AVX2 {
				b.Skip("no VDPBF16PS or AVX2 kernel")
			}
			bw := make([]float32, sh.k*sh.n)
			for i := range bw {
				bw[i] = float32(i%7) * 0.01
			}
			a := make([]float32, sh.tok*sh.k)
			c := make([]float32, sh.tok*sh.n)
			p := PackBF16(bw, sh.n, sh.k, sh.n)
			c0 := cpuSeconds()
			b.ResetTimer()
			for range b.N {
				GemmBF16(sh.tok, a, sh.k, p, 1, c, sh.n)
			}
			f := 2 * float64(sh.tok) * float64(sh.n) * float64(sh.k) * float64(b.N)
			b.ReportMetric(f/b.Elapsed().Seconds()/1e9, "GFLOPS")
			b.ReportMetric(f/(cpuSeconds()-c0)/1e9, "GFLOP/cpu-s")
		})
	}
	b.Run("backward-dyW-down", func(b *testing.B) {
		dyd, dxd := make([]float32, m*k), make([]float32, m*n)
		c0 := cpuSeconds()
		for range b.N {
			SgemmGo(false, false, m, n, k, 1, dyd, k, w, n, 1, dxd, n)
		}
		b.ReportMetric(2*m*n*k*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOPS")
		b.ReportMetric(2*m*n*k*float64(b.N)/(cpuSeconds()-c0)/1e9, "GFLOP/cpu-s")
	})
}

// BenchmarkStudentDx times the backward's dx = dy·W through one frozen
// projection of the Qwen2.5-Coder-0.5B student as the trainer runs it (8 ×
// 190 tokens, 256 widened rows of W per call, accumulating into dx): up/gate
// (W 4,864 × 896) and down (W 896 × 4,864), on the packed 8×48 path and on
// the in-place kernels (the same bits):
//
//	go test ./blas -run '^$' -bench StudentDx -benchtime 3x
func BenchmarkStudentDx(b *testing.B) {
	const t, tile = 1520, 256
	for _, sh := range []struct {
		name    string
		out, in int
	}{{"up_4864x896", 4864, 896}, {"down_896x4864", 896, 4864}} {
		dy, w, dx := make([]float32, t*sh.out), make([]float32, sh.out*sh.in), make([]float32, t*sh.in)
		for i := range w {
			w[i] = float32(i%7) * 0.01
		}
		for _, packed := range []bool{true, false} {
			name := sh.name + "/in-place"
			if packed {
				name = sh.name + "/packed"
			}
			b.Run(name, func(b *testing.B) {
				defer func(v bool) { usePackOP = v }(usePackOP)
				usePackOP = packed
				c0 := cpuSeconds()
				for range b.N {
					for r0 := 0; r0 < sh.out; r0 += tile {
						r1 := min(r0+tile, sh.out)
						SgemmGo(false, false, t, sh.in, r1-r0, 1, dy[r0:], sh.out, w[r0*sh.in:r1*sh.in], sh.in, 1, dx, sh.in)
					}
				}
				flops := 2 * float64(t) * float64(sh.out) * float64(sh.in) * float64(b.N)
				b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOPS")
				b.ReportMetric(flops/(cpuSeconds()-c0)/1e9, "GFLOP/cpu-s")
			})
		}
	}
}

// BenchmarkLoRAGrads times LoRA's two 16-row gradient products at the
// SmolLM2 step's 3,040 tokens: dA += gᵀ·x (x [T, 576]) and dBᵀ += (s·u)ᵀ·dy
// (dy [T, 1536]), on kernOP16x16T512 and on the 4×48 tiles it replaced (the
// same bits). In the step x is a layer's input saved by the forward, long
// out of cache: the cold rows read a different x each time from a ring of
// 512 MB, as the step does.
//
//	go test ./blas -run '^$' -bench LoRAGrads -benchtime 96x
func BenchmarkLoRAGrads(b *testing.B) {
	const t, r = 3040, 16
	g := make([]float32, t*r)
	for i := range g {
		g[i] = float32(i%5) * 0.01
	}
	for _, n := range []int{576, 1536} {
		for _, cold := range []bool{false, true} {
			ring := 1
			if cold {
				ring = (512 << 20) / (4 * t * n)
			}
			xs := make([][]float32, ring)
			for i := range xs {
				xs[i] = make([]float32, t*n)
				for j := range xs[i] {
					xs[i][j] = float32(j%7) * 0.1
				}
			}
			c := make([]float32, r*n)
			for _, on := range []bool{true, false} {
				name := fmt.Sprintf("n%d/16x16", n)
				if !on {
					name = fmt.Sprintf("n%d/4x48", n)
				}
				if cold {
					name += "/cold"
				}
				b.Run(name, func(b *testing.B) {
					defer func(v bool) { useOP16 = v }(useOP16)
					useOP16 = on
					c0 := cpuSeconds()
					for i := range b.N {
						SgemmGo(true, false, r, n, t, 1, g, r, xs[i%ring], n, 1, c, n)
					}
					flops := 2 * float64(t) * float64(r) * float64(n) * float64(b.N)
					b.ReportMetric(flops/(cpuSeconds()-c0)/1e9, "GFLOP/cpu-s")
				})
			}
		}
	}
}

// BenchmarkLoRANT times LoRA's rank-16 dot-product products at the SmolLM2
// step's 3,040 tokens: u = x·Aᵀ (k = 576 or 1,536, the layer's input
// width) and g = dy·(s·B) (k = the output width), on gemmNT16 and on the
// 4×6, 4×3 and 1×1 kernels it replaced; out += s·(u·Bᵀ) (k = 16, 576 or
// 1,536 columns) on gemmNTS16 and on kern4x8P512S ("new" and "old" in the
// names). The same bits either way:
//
//	go test ./blas -run '^$' -bench LoRANT -benchtime 50x
func BenchmarkLoRANT(b *testing.B) {
	const t, r = 3040, 16
	fill := func(n, mod int, step float32) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(i%mod) * step
		}
		return x
	}
	// Each case: C [t, n] = alpha·A [t, k]·Bᵀ (B [n, k]) + beta·C.
	type product struct {
		name        string
		n, k        int
		alpha, beta float32
	}
	var cases []product
	for _, d := range []int{576, 1536} {
		cases = append(cases, product{fmt.Sprintf("k%d", d), r, d, 1, 0}, product{fmt.Sprintf("out%d", d), d, r, 2, 1})
	}
	for _, p := range cases {
		a, w, c := fill(t*p.k, 7, 0.1), fill(p.n*p.k, 5, 0.01), make([]float32, t*p.n)
		for _, on := range []bool{true, false} {
			name := p.name + "/new"
			if !on {
				name = p.name + "/old"
			}
			b.Run(name, func(b *testing.B) {
				defer func(v bool) { useNT16 = v }(useNT16)
				useNT16 = on
				c0 := cpuSeconds()
				for range b.N {
					SgemmGo(false, true, t, p.n, p.k, p.alpha, a, p.k, w, p.k, p.beta, c, p.n)
				}
				flops := 2 * float64(t) * float64(p.n) * float64(p.k) * float64(b.N)
				b.ReportMetric(flops/(cpuSeconds()-c0)/1e9, "GFLOP/cpu-s")
			})
		}
	}
}
