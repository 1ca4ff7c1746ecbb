package blas

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestRoundBF16 holds RoundBF16 to hand-worked cases and the assembly's
// VCVTNEPS2BF16 to RoundBF16 on random bit patterns and specials.
func TestRoundBF16(t *testing.T) {
	for _, c := range []struct {
		in   uint32
		want uint16
	}{
		{0x3f800000, 0x3f80}, // 1
		{0x3f808000, 0x3f80}, // tie, even stays
		{0x3f818000, 0x3f82}, // tie, odd rounds up
		{0x3f808001, 0x3f81}, // above the tie
		{0x7f7fffff, 0x7f80}, // max float rounds to +Inf
		{0x00400000, 0x0000}, // denormal to +0
		{0x80400000, 0x8000}, // denormal to −0
		{0x7f800000, 0x7f80}, // +Inf
		{0x7f800001, 0x7fc0}, // signalling NaN made quiet
	} {
		if got := RoundBF16(math.Float32frombits(c.in)); got != c.want {
			t.Errorf("RoundBF16(%#08x) = %#04x, want %#04x", c.in, got, c.want)
		}
	}
	if !useBF16 {
		t.Skip("no AVX512_BF16")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	src := make([]float32, 1<<16)
	for i := range src {
		src[i] = math.Float32frombits(rng.Uint32())
	}
	specials := []uint32{0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001, 0x00000001, 0x807fffff, 0x00800000, 0x7f7fffff, 0x3f808000, 0x3f818000}
	for i, b := range specials {
		src[i] = math.Float32frombits(b)
	}
	dst := make([]uint16, len(src))
	roundBF16x16(len(src), &src[0], &dst[0])
	for i, x := range src {
		if want := RoundBF16(x); dst[i] != want {
			t.Fatalf("VCVTNEPS2BF16(%#08x) = %#04x, RoundBF16 %#04x", math.Float32bits(x), dst[i], want)
		}
	}
}

func randGemmBF16(rng *rand.Rand, m, n, k int) (a, b, c []float32) {
	a = make([]float32, m*k)
	b = make([]float32, k*n)
	c = make([]float32, m*n)
	for i := range a {
		a[i] = float32(rng.NormFloat64())
	}
	for i := range b {
		b[i] = float32(rng.NormFloat64() * 0.05)
	}
	for i := range c {
		c[i] = float32(rng.NormFloat64())
	}
	return a, b, c
}

// gemmBF16Both runs GemmBF16 on the chain kernel named (kernChains) and on
// kernBF16Go.
func gemmBF16Both(t testing.TB, kern string, m, n, k int, a, b, c0 []float32, beta float32) (asm, ref []float32) {
	p := PackBF16(b, n, k, n)
	asm = gemmBF16Kernels(m, n, k, a, p, c0, beta, kern)
	ref = gemmBF16Kernels(m, n, k, a, p, c0, beta, "Go")
	return asm, ref
}

// gemmBF16Kernels runs GemmBF16 on a copy of c0 with the kernel named
// ("Go", "AVX2", "VDPBF16PS" or "AMX"), restoring the CPU's choice after.
func gemmBF16Kernels(m, n, k int, a []float32, p *BF16Pack, c0 []float32, beta float32, kern string) []float32 {
	oldBF16, oldAMX, oldAVX2 := useBF16, useAMX, useBF16AVX2
	setUseBF16(kern == "VDPBF16PS" || kern == "AMX")
	setUseAMX(kern == "AMX")
	setUseBF16AVX2(kern == "AVX2")
	defer func() { setUseBF16(oldBF16); setUseAMX(oldAMX); setUseBF16AVX2(oldAVX2) }()
	c := append([]float32(nil), c0...)
	GemmBF16(m, a, k, p, beta, c, n)
	return c
}

// kernChains lists the assembly kernels this CPU has that compute the
// VDPBF16PS chain, kernBF16Go's bits.
func kernChains() []string {
	var ks []string
	if useBF16 {
		ks = append(ks, "VDPBF16PS")
	}
	if useAVX2 {
		ks = append(ks, "AVX2")
	}
	return ks
}

// gemmBF16Plain is GemmBF16's arithmetic element by element on the
// unpacked inputs, with no blocking: one chain per element over the pairs of
// k in order (dpStep, high half first), from C (beta 1) or zero.
func gemmBF16Plain(m, n, k int, a, b, c []float32, beta float32) []float32 {
	out := make([]float32, m*n)
	bf := func(x []float32, i int) uint16 {
		if i >= len(x) {
			return 0
		}
		return RoundBF16(x[i])
	}
	for i := range m {
		for j := range n {
			s := float32(0)
			if beta == 1 {
				s = c[i*n+j]
			}
			for p := 0; p < k; p += 2 {
				var ahi, bhi uint16
				if p+1 < k {
					ahi, bhi = bf(a, i*k+p+1), bf(b, (p+1)*n+j)
				}
				s = dpStep(s, ahi, bhi)
				s = dpStep(s, bf(a, i*k+p), bf(b, p*n+j))
			}
			out[i*n+j] = s
		}
	}
	return out
}

// TestGemmBF16Kernel: the VDPBF16PS and AVX2 kernels' sums (AMX off) are kernBF16Go's,
// bitwise, over row tails, partial panels, odd k and several pair blocks;
// and both are gemmBF16Plain's, so no blocking of rows, panels or pairs
// changes a bit.
func TestGemmBF16Kernel(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, s := range [][3]int{{8, 48, 2}, {8, 48, 128}, {16, 96, 129}, {13, 50, 7}, {1, 1, 1}, {67, 150, 300}, {40, 576, 192}, {1030, 48, 130}, {150, 100, 2101}, {136, 48, 1026}} {
		m, n, k := s[0], s[1], s[2]
		for _, beta := range []float32{0, 1} {
			a, b, c := randGemmBF16(rng, m, n, k)
			ref := gemmBF16Kernels(m, n, k, a, PackBF16(b, n, k, n), c, beta, "Go")
			plain := gemmBF16Plain(m, n, k, a, b, c, beta)
			for i := range ref {
				if math.Float32bits(ref[i]) != math.Float32bits(plain[i]) {
					t.Fatalf("m=%d n=%d k=%d beta=%v: C[%d] = %v (Go), %v (unblocked)", m, n, k, beta, i, ref[i], plain[i])
				}
			}
			for _, kern := range kernChains() {
				asm, _ := gemmBF16Both(t, kern, m, n, k, a, b, c, beta)
				for i := range asm {
					if math.Float32bits(asm[i]) != math.Float32bits(ref[i]) {
						t.Fatalf("m=%d n=%d k=%d beta=%v: C[%d] = %v (%s), %v (Go)", m, n, k, beta, i, asm[i], kern, ref[i])
					}
				}
			}
		}
	}
}

// TestGemmBF16AVX2Denormals: where VDPBF16PS flushes (a denormal C it
// starts from, a sum that falls below float32's normal range, a sum that
// rounds up to the smallest normal, a last sum that is an exact
// denormal), the AVX2 kernel's tiles are computed again in Go, and GemmBF16
// gives kernBF16Go's bits.
func TestGemmBF16AVX2Denormals(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2")
	}
	const tiny = 0x1p-126 // the smallest normal
	f := math.Float32frombits
	for _, c := range []struct {
		name    string
		a, b, c float32 // A and B constant, C its start
		k       int
	}{
		{"denormal start", 1, 0, f(0x00400000), 2},                // C read as zero
		{"sum below normal", 0x1p-70, 0x1p-60, 0, 2},              // 2⁻¹³⁰ a product
		{"cancels to denormal", 0x1p-63, -0x1p-64, 1.5 * tiny, 2}, // 1.5, 1, 0.5 × 2⁻¹²⁶
		{"rounds up to normal", 1.5 * 0x1p-75, -0x1p-76, tiny, 2}, // 2⁻¹²⁶ − 0.75·2⁻¹⁵⁰, then less
		{"exact denormal last", 0x1p-64, 0x1p-64, 0, 1},           // 2⁻¹²⁸, exact
		{"normal throughout", 0x1p-63, -0x1p-63, 4 * tiny, 2},     // 4, 3, 2 × 2⁻¹²⁶
	} {
		m, n := 9, 50
		a, b, cc := make([]float32, m*c.k), make([]float32, c.k*n), make([]float32, m*n)
		for i := range a {
			a[i] = c.a
		}
		for i := range b {
			b[i] = c.b
		}
		for i := range cc {
			cc[i] = c.c
		}
		for _, beta := range []float32{0, 1} {
			asm, ref := gemmBF16Both(t, "AVX2", m, n, c.k, a, b, cc, beta)
			for i := range asm {
				if math.Float32bits(asm[i]) != math.Float32bits(ref[i]) {
					t.Fatalf("%s, beta %v: C[%d] = %#08x (AVX2), %#08x (Go)", c.name, beta, i, math.Float32bits(asm[i]), math.Float32bits(ref[i]))
				}
			}
		}
	}
	// The kernel alone reports the sum it did not flush: without the
	// fallback the cases above would differ.
	a := make([]float32, bf16GroupRows*2)
	bw := make([]float32, 2*bf16PackCols)
	c := make([]float32, bf16GroupRows*bf16PackCols)
	for i := range a {
		a[i] = 0x1p-70
	}
	for i := range bw {
		bw[i] = 0x1p-60
	}
	if flags := kernBF16x8x48AVX2(1, &a[0], 2, &bw[0], &c[0], bf16PackCols, 0); flags == 0 || c[0] != 0x1p-129 {
		t.Errorf("2⁻¹³⁰ + 2⁻¹³⁰ on the kernel alone: flags %#x, C %v; want the denormal 2⁻¹²⁹ and a flag", flags, c[0])
	}
}

// TestGemmBF16Error bounds GemmBF16 against the exact product of its float32
// inputs: rounding each input to bf16 (unit roundoff u = 2⁻⁸) moves each
// product by at most (2u + u²)|a||b|, and the float32 chain of 2⌈k/2⌉ sums
// adds at most 2⌈k/2⌉·2⁻²⁴ times the sum of magnitudes (first order). Each
// kernel this CPU has is held to it: AMX, VDPBF16PS, and kernBF16Go.
func TestGemmBF16Error(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, s := range [][3]int{{19, 100, 577}, {8, 48, 1536}, {40, 96, 1030}} {
		m, n, k := s[0], s[1], s[2]
		a, b, c := randGemmBF16(rng, m, n, k)
		p := PackBF16(b, n, k, n)
		for _, kern := range bf16Kernels() {
			got := gemmBF16Kernels(m, n, k, a, p, c, 1, kern)
			worst := bf16ErrorBound(t, m, n, k, a, b, c, got)
			t.Logf("%s m=%d n=%d k=%d: worst error %.2f of the bound", kern, m, n, k, worst)
		}
	}
}

// bf16Kernels lists the kernels this CPU can run GemmBF16 on.
func bf16Kernels() []string {
	ks := append([]string{"Go"}, kernChains()...)
	if useAMX {
		ks = append(ks, "AMX")
	}
	return ks
}

// bf16ErrorBound fails t where got (C = bf16(A)·bf16(B) + C) is further
// from the exact product than TestGemmBF16Error's bound, and returns the
// worst error as a fraction of the bound.
func bf16ErrorBound(t testing.TB, m, n, k int, a, b, c, got []float32) float64 {
	t.Helper()
	const u = 1.0 / 256
	worst := 0.0
	for i := range m {
		for j := range n {
			exact, mag := float64(c[i*n+j]), math.Abs(float64(c[i*n+j]))
			for p := range k {
				v := float64(a[i*k+p]) * float64(b[p*n+j])
				exact += v
				mag += math.Abs(v)
			}
			bound := (2*u+u*u)*mag + float64(k+2)*0x1p-24*mag*(1+2*u)
			e := math.Abs(float64(got[i*n+j]) - exact)
			if !(e <= bound) {
				t.Fatalf("m=%d n=%d k=%d: C[%d,%d] = %v, exact %v: error %.3g over the bound %.3g", m, n, k, i, j, got[i*n+j], exact, e, bound)
			}
			worst = max(worst, e/bound)
		}
	}
	return worst
}

// TestGemmBF16AMX: the AMX tiles (32 rows, 16 pairs a step; the pairs past
// a multiple of 16 on the VDPBF16PS kernel; partial groups and panels
// through a tile) keep TestGemmBF16Error's bound over row tails, partial
// panels, odd k, k below one step and several blocks of pairs, from C and
// from zero. Their sums are not the VDPBF16PS chain's (the tile sums a
// step's products more exactly than a float32 chain: nearer the exact
// product), so the test also checks that some element differs from the
// chain, which says the tiles ran.
func TestGemmBF16AMX(t *testing.T) {
	if !useAMX {
		t.Skip("no AMX-BF16 (or Linux refused the tile data)")
	}
	rng := rand.New(rand.NewPCG(9, 10))
	for _, s := range [][3]int{{32, 48, 32}, {16, 48, 64}, {64, 96, 96}, {33, 49, 33}, {128, 144, 576}, {13, 50, 7}, {67, 150, 300}, {40, 576, 192}, {1030, 48, 130}, {150, 100, 2101}, {136, 48, 1026}} {
		m, n, k := s[0], s[1], s[2]
		for _, beta := range []float32{0, 1} {
			a, b, c := randGemmBF16(rng, m, n, k)
			p := PackBF16(b, n, k, n)
			amx := gemmBF16Kernels(m, n, k, a, p, c, beta, "AMX")
			chain := gemmBF16Kernels(m, n, k, a, p, c, beta, "VDPBF16PS")
			cc := c
			if beta == 0 {
				cc = make([]float32, len(c))
			}
			bf16ErrorBound(t, m, n, k, a, b, cc, amx)
			differ := 0
			for i := range amx {
				if math.Float32bits(amx[i]) != math.Float32bits(chain[i]) {
					differ++
				}
			}
			if k >= 2*amxPairs && differ == 0 {
				t.Errorf("m=%d n=%d k=%d beta=%v: every element is the VDPBF16PS chain's: the tiles did not run", m, n, k, beta)
			}
		}
	}
}

// FuzzGemmBF16 holds the VDPBF16PS and AVX2 kernels to kernBF16Go on
// shapes and values drawn from the input (values as raw float32 bits:
// specials and denormals included), and the AMX tiles, where the CPU has them, to the exact
// product within the chain's error (amxNear).
func FuzzGemmBF16(f *testing.F) {
	f.Add([]byte{9, 50, 7, 1, 0x3f, 0x80, 0, 0, 0xbf, 0xc0, 0, 0})
	f.Add([]byte{1, 1, 1, 0, 0x7f, 0x80, 0, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(kernChains()) == 0 {
			t.Skip("no VDPBF16PS or AVX2 kernel")
		}
		if len(data) < 4 {
			return
		}
		m, n, k := 1+int(data[0])%20, 1+int(data[1])%100, 1+int(data[2])%140
		beta := float32(data[3] & 1)
		vals := data[4:]
		next := func(i int) float32 {
			if len(vals) < 4 {
				return float32(i%7) - 3
			}
			o := (4 * i) % (len(vals) - 3)
			return math.Float32frombits(binary.LittleEndian.Uint32(vals[o:]))
		}
		a, b, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
		for i := range a {
			a[i] = next(i)
		}
		for i := range b {
			b[i] = next(i + 7)
		}
		for i := range c {
			c[i] = next(i + 13)
		}
		var ref []float32
		for _, kern := range kernChains() {
			var asm []float32
			asm, ref = gemmBF16Both(t, kern, m, n, k, a, b, c, beta)
			for i := range asm {
				x, y := asm[i], ref[i]
				if math.Float32bits(x) != math.Float32bits(y) && !(x != x && y != y) {
					t.Fatalf("m=%d n=%d k=%d beta=%v: C[%d] = %v (%s), %v (Go)", m, n, k, beta, i, x, kern, y)
				}
			}
		}
		if useAMX {
			amx := gemmBF16Kernels(m, n, k, a, PackBF16(b, n, k, n), c, beta, "AMX")
			amxNear(t, m, n, k, a, b, c, beta, amx, ref)
		}
	})
}

// amxNear fails t where the AMX product got is not within the float32
// chain's error of the exact product of the bf16-rounded inputs (denormals
// read as zero), where that product is finite and no magnitude nears
// float32's range (past it the order of the sums decides between a finite
// sum, ±Inf and NaN: the chain overflowed where the tiles did not), and
// where an infinite or NaN input leaves got finite. ref, the chain's
// result, is for the message.
func amxNear(t *testing.T, m, n, k int, a, b, c []float32, beta float32, got, ref []float32) {
	t.Helper()
	in := func(x float32) float64 {
		v := float64(WidenBF16One(RoundBF16(x)))
		if math.Abs(v) < 0x1p-126 {
			return 0
		}
		return v
	}
	for i := range m {
		for j := range n {
			g := float64(got[i*n+j])
			exact, mag := 0.0, 0.0
			if beta == 1 {
				exact, mag = float64(c[i*n+j]), math.Abs(float64(c[i*n+j]))
			}
			for p := range k {
				v := in(a[i*k+p]) * in(b[p*n+j])
				exact += v
				mag += math.Abs(v)
			}
			switch {
			case math.IsInf(mag, 0) || math.IsNaN(mag):
				if !math.IsInf(g, 0) && !math.IsNaN(g) {
					t.Fatalf("m=%d n=%d k=%d beta=%v: C[%d,%d] = %v (AMX) from an infinite or NaN input (chain %v)", m, n, k, beta, i, j, g, ref[i*n+j])
				}
				continue
			case mag > 0x1p100:
				continue
			}
			bound := float64(k+2)*0x1p-24*mag + float64(k+2)*0x1p-126
			if !(math.Abs(g-exact) <= bound) {
				t.Fatalf("m=%d n=%d k=%d beta=%v: C[%d,%d] = %v (AMX), exact %v (chain %v): error %.3g over %.3g", m, n, k, beta, i, j, g, exact, ref[i*n+j], math.Abs(g-exact), bound)
			}
		}
	}
}

// TestGemmBF16Range: pieces of k accumulated in order (the first with beta
// 0, the rest continuing from C) give the whole product's bits: the whole
// product's chains also pass through C between blocks of pairs.
func TestGemmBF16Range(t *testing.T) {
	// The chain's bits: a piece of pairs on the AMX tiles sums them in
	// another order (TestGemmBF16AMX bounds it).
	old := useAMX
	setUseAMX(false)
	defer setUseAMX(old)
	rng := rand.New(rand.NewPCG(7, 8))
	m, n, k := 21, 60, 301
	a, b, _ := randGemmBF16(rng, m, n, k)
	p := PackBF16(b, n, k, n)
	whole := make([]float32, m*n)
	GemmBF16(m, a, k, p, 0, whole, n)
	for _, cuts := range [][]int{{0, 301}, {0, 128, 301}, {0, 2, 130, 300, 301}, {0, 4, 6, 301}} {
		got := make([]float32, m*n)
		for i := 0; i+1 < len(cuts); i++ {
			k0, k1 := cuts[i], cuts[i+1]
			beta := float32(min(i, 1))
			GemmBF16Range(m, a[k0:], k, p, k0, k1, beta, got, n)
		}
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(whole[i]) {
				t.Fatalf("cuts %v: C[%d] = %v, whole %v", cuts, i, got[i], whole[i])
			}
		}
	}
}

// BenchmarkBF16Kernel times the 8×48 VDPBF16PS kernel alone on operands
// that stay in L1 (one 64-pair block of A and of a panel, C accumulated):
// the ceiling GemmBF16 approaches in context (BenchmarkTrainShapes'
// backward-*-bf16 rows).
//
//	go test ./blas -run '^$' -bench BF16Kernel -benchtime 5x
func BenchmarkBF16Kernel(b *testing.B) {
	if !useBF16 {
		b.Skip("no AVX512_BF16")
	}
	benchKernel(b, bf16GroupRows, func(kp int, a *uint16, lda int, bp *uint32, c *float32) {
		kernBF16x8x48(kp, a, lda, bp, c, bf16PackCols, 1)
	})
}

// BenchmarkBF16KernelAVX2 times the AVX2 kernel as BenchmarkBF16Kernel
// times VDPBF16PS's (with the AVX-512 kernels on, the float32 Sgemm rows of
// BenchmarkTrainShapes are theirs: run with CLAWRL_AVX512=0 to set it beside
// the AVX2 float32 kernel).
//
//	go test ./blas -run '^$' -bench BF16KernelAVX2 -benchtime 5x
func BenchmarkBF16KernelAVX2(b *testing.B) {
	if !useAVX2 {
		b.Skip("no AVX2")
	}
	// benchKernel's A and panel, widened.
	af := make([]float32, bf16GroupRows*2*64)
	bw := make([]float32, 2*64*bf16PackCols)
	for i := range af {
		af[i] = 1
	}
	for i := range bw {
		bw[i] = 0x1p-7
	}
	benchKernel(b, bf16GroupRows, func(kp int, _ *uint16, lda int, _ *uint32, c *float32) {
		kernBF16x8x48AVX2(kp, &af[0], lda, &bw[0], c, bf16PackCols, 1)
	})
}

// BenchmarkAMXKernel times the AMX kernel alone as BenchmarkBF16Kernel
// times the 8×48 one: 32 rows by a 48-column panel over 64 pairs, L1- and
// L2-resident.
//
//	go test ./blas -run '^$' -bench 'BF16Kernel|AMXKernel' -benchtime 5x
func BenchmarkAMXKernel(b *testing.B) {
	if !useAMX {
		b.Skip("no AMX-BF16")
	}
	benchKernel(b, amxRows, func(kp int, a *uint16, lda int, bp *uint32, c *float32) {
		kernAMX32x48(kp/amxPairs, a, lda, bp, c, bf16PackCols, 1, &AMXTileConfig[0])
	})
}

// benchKernel times 1,000 calls of kern (rows of bf16 A by a 48-column
// panel over 64 pairs, C accumulated) per iteration, in GFLOP per
// CPU-second.
func benchKernel(b *testing.B, rows int, kern func(kp int, a *uint16, lda int, bp *uint32, c *float32)) {
	const kp, calls = 64, 1000
	a := make([]uint16, rows*2*kp)
	bp := make([]uint32, kp*bf16PackCols)
	c := make([]float32, rows*bf16PackCols)
	for i := range a {
		a[i] = 0x3f80 // 1
	}
	for i := range bp {
		bp[i] = 0x3c003c00 // 2⁻⁷ twice
	}
	c0 := cpuSeconds()
	for range b.N {
		for range calls {
			kern(kp, &a[0], 2*kp, &bp[0], &c[0])
		}
	}
	f := 2 * float64(rows) * bf16PackCols * 2 * kp * calls * float64(b.N)
	b.ReportMetric(f/(cpuSeconds()-c0)/1e9, "GFLOP/cpu-s")
}

// TestPackRowsPieces packs B a few rows at a time, from a buffer holding
// only those rows, and checks the pack is PackBF16's word for word: odd and
// even k, a last panel part empty, pieces of different sizes, a row stride
// wider than n.
func TestPackRowsPieces(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, sh := range [][3]int{{7, 50, 2}, {8, 48, 4}, {33, 97, 6}, {64, 16, 64}, {1, 5, 2}} {
		k, n, piece := sh[0], sh[1], sh[2]
		ldb := n + 3
		b := make([]float32, k*ldb)
		for i := range b {
			b[i] = float32(rng.NormFloat64())
		}
		want := PackBF16(b, ldb, k, n)
		got := NewBF16Pack(k, n)
		buf := make([]float32, piece*ldb)
		for r0 := 0; r0 < k; r0 += piece {
			r1 := min(r0+piece, k)
			clear(buf)
			copy(buf, b[r0*ldb:r1*ldb])
			got.PackRows(buf, ldb, r0, r1)
		}
		if !slices.Equal(got.data, want.data) || got.K != want.K || got.N != want.N || got.kp != want.kp {
			t.Errorf("k=%d n=%d in pieces of %d: the pack differs from PackBF16's", k, n, piece)
		}
	}
}

// TestPackBF16Kernel holds the vector packing (VCVTNEPS2BF16 on a pair of
// rows) to RoundBF16 word for word, on random bit patterns and specials:
// ±0, denormals, ±Inf, NaNs, ties to even.
func TestPackBF16Kernel(t *testing.T) {
	if !useBF16 {
		t.Skip("no AVX512_BF16")
	}
	rng := rand.New(rand.NewPCG(7, 8))
	specials := []uint32{0, 0x80000000, 1, 0x807fffff, 0x00800000, 0x7f800000, 0xff800000, 0x7fc00000,
		0x7f800001, 0xffffffff, 0x3f808000, 0x3f818000, 0x3f80ffff, 0x7f7fffff}
	for _, sh := range [][2]int{{9, 50}, {16, 96}, {4, 17}} {
		k, n := sh[0], sh[1]
		b := make([]float32, k*n)
		for i := range b {
			if i%5 == 0 {
				b[i] = math.Float32frombits(specials[rng.IntN(len(specials))])
			} else {
				b[i] = math.Float32frombits(rng.Uint32())
			}
		}
		vec := PackBF16(b, n, k, n)
		setUseBF16(false)
		ref := PackBF16(b, n, k, n)
		setUseBF16(true)
		if !slices.Equal(vec.data, ref.data) {
			t.Errorf("k=%d n=%d: the vector pack differs from RoundBF16's", k, n)
		}
	}
}

// BenchmarkPackBF16 packs the 1.5B's gate projection as the trainer's
// backward holds it (k = 8,960 outputs, n = 1,536 inputs) with the vector
// pair kernel and with RoundBF16 alone, alternately in one loop; the
// figures are ns per packed weight.
func BenchmarkPackBF16(b *testing.B) {
	if !useBF16 {
		b.Skip("no AVX512_BF16")
	}
	k, n := 8960, 1536
	src := make([]float32, k*n)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range src {
		src[i] = float32(rng.NormFloat64() * 0.02)
	}
	var vec, ref time.Duration
	for range b.N {
		t0 := time.Now()
		PackBF16(src, n, k, n)
		t1 := time.Now()
		setUseBF16(false)
		PackBF16(src, n, k, n)
		setUseBF16(true)
		vec, ref = vec+t1.Sub(t0), ref+time.Since(t1)
	}
	w := float64(b.N) * float64(k*n)
	b.ReportMetric(float64(vec.Nanoseconds())/w, "ns/weight")
	b.ReportMetric(float64(ref.Nanoseconds())/w, "ns/weight-scalar")
	b.ReportMetric(float64(ref)/float64(vec), "speedup")
}
