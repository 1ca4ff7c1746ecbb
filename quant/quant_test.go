package quant

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

var allTypes = []Type{Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K}

func randRow(rng *rand.Rand, n int, scale float32) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64()) * scale
	}
	return x
}

func quantRows(t Type, x []float32, rows, cols int) *Matrix {
	rb, err := t.RowBytes(cols)
	if err != nil {
		panic(err)
	}
	data := make([]byte, rows*rb)
	for r := 0; r < rows; r++ {
		QuantizeRow(t, data[r*rb:(r+1)*rb], x[r*cols:(r+1)*cols])
	}
	m, err := NewMatrix(t, rows, cols, data)
	if err != nil {
		panic(err)
	}
	return m
}

func TestF16(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		f := F16ToF32(uint16(h))
		if f != f { // NaN
			continue
		}
		if back := F32ToF16(f); back != uint16(h) {
			t.Fatalf("f16 %#04x -> %v -> %#04x", h, f, back)
		}
	}
	for _, c := range []struct {
		f float32
		h uint16
	}{{1, 0x3c00}, {65504, 0x7bff}, {1e6, 0x7c00}, {-2, 0xc000}, {5.960464e-08, 1}, {1.0009765625 + 0.00048828125, 0x3c02}} {
		if got := F32ToF16(c.f); got != c.h {
			t.Errorf("F32ToF16(%v) = %#04x, want %#04x", c.f, got, c.h)
		}
	}
}

// The quantizers round-trip: dequantized blocks stay within the format's
// step of the input.
func TestQuantizeRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	// About half a quantization step of N(0,1) blocks (a 32-block spans
	// ~5σ): a broken layout errs by whole units.
	bound := map[Type]float64{Q4_0: 0.3, Q4_1: 0.3, Q5_0: 0.15, Q5_1: 0.12, Q8_0: 0.02, Q4_K: 0.25, Q5_K: 0.15, Q6_K: 0.08}
	for _, ty := range allTypes {
		x := randRow(rng, 1024, 1)
		m := quantRows(ty, x, 1, 1024)
		y := make([]float32, 1024)
		DequantizeRow(ty, y, m.Row(0))
		var worst float64
		for i := range x {
			worst = max(worst, math.Abs(float64(x[i]-y[i])))
		}
		if worst > bound[ty] {
			t.Errorf("%v: max round-trip error %.4f > %.2f", ty, worst, bound[ty])
		}
	}
}

// The reference dot of a weight row with a quantized activation equals the
// float dot of the two dequantized rows (the same sum in another order).
func TestDotRefMatchesDequantized(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const cols = 1536
	for _, ty := range allTypes {
		w := quantRows(ty, randRow(rng, cols, 0.05), 1, cols)
		x := randRow(rng, cols, 1)
		var a Act
		a.Quantize(ty, x, 1, cols)
		wf := make([]float32, cols)
		DequantizeRow(ty, wf, w.Row(0))
		xf := a.dequantize(0)
		var want, mag float64
		for i := range wf {
			want += float64(wf[i]) * float64(xf[i])
			mag += math.Abs(float64(wf[i]) * float64(xf[i]))
		}
		got := float64(dotRef[ty](w.Row(0), a.row(0)))
		// The Q8 activation's sum term is kept as float16 (as llama.cpp
		// does), which moves Q4_1/Q5_1 dots by up to 2^-11 of Σ|m·s|.
		if math.Abs(got-want) > 1e-3*mag {
			t.Errorf("%v: ref dot %.6f, dequantized dot %.6f (Σ|w·x| %.3f)", ty, got, want, mag)
		}
	}
}

// dequantize widens activation row t back to float32 (tests only).
func (a *Act) dequantize(t int) []float32 {
	r := a.row(t)
	out := make([]float32, a.Cols)
	for i, q := range r.qs {
		if a.K {
			out[i] = float32(q) * r.ds[i/QKK]
		} else {
			out[i] = float32(q) * r.ds[2*(i/QK)]
		}
	}
	return out
}

// Every fast kernel this CPU has agrees with its reference within float
// rounding: same integer block sums, float accumulation in another order
// (bound 1e-5 of Σ|block terms|).
func TestFastDotsMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	variants := map[string]map[Type]func([]byte, actRow) float32{
		"avx2": fastDots(false, hasAVX2),
		"vnni": fastDots(hasVNNI, hasAVX2),
	}
	ran := 0
	for name, dots := range variants {
		for ty, fast := range dots {
			for i, cols := range []int{256, 768, 1536, 512} {
				w := quantRows(ty, randRow(rng, cols, 0.05), 1, cols)
				x := randRow(rng, cols, 1)
				if i == 3 { // extremes: every activation ±127 after quantization
					for j := range x {
						x[j] = float32(1 - 2*(j*7%3&1))
					}
				}
				var a Act
				a.Quantize(ty, x, 1, cols)
				want := dotRef[ty](w.Row(0), a.row(0))
				got := fast(w.Row(0), a.row(0))
				wf := make([]float32, cols)
				DequantizeRow(ty, wf, w.Row(0))
				xf := a.dequantize(0)
				var mag float64
				for i := range wf {
					mag += math.Abs(float64(wf[i]) * float64(xf[i]))
				}
				if math.Abs(float64(got-want)) > 1e-5*mag+1e-6 {
					t.Errorf("%s %v cols %d: fast %v, reference %v", name, ty, cols, got, want)
				}
				ran++
			}
		}
	}
	t.Logf("%d fast-kernel cases (avx2 %v, vnni %v)", ran, hasAVX2, hasVNNI)
}

func TestQuantizeQ8MatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	x := randRow(rng, 4096, 3)
	x[5] = 0
	copy(x[64:96], make([]float32, 32)) // an all-zero block
	x[100] = 1e-30                      // a block of one tiny value (its d rounds to a float16 zero)
	x[200], x[201] = 2.5/127, -3.5/127  // halves: round to even
	x[300] = 3e38                       // large, finite
	qs, ds, is := make([]int8, len(x)), make([]float32, len(x)/16), make([]int32, len(x)/32)
	qr, dr, ir := make([]int8, len(x)), make([]float32, len(x)/16), make([]int32, len(x)/32)
	t.Logf("assembly quantizer: %v", quantizeQ8Fast(qs, ds, is, x))
	quantizeQ8(qs, ds, is, x)
	quantizeQ8Ref(qr, dr, ir, x)
	for i := range is {
		if is[i] != ir[i] {
			t.Fatalf("Σq[%d] = %d, reference %d", i, is[i], ir[i])
		}
	}
	for i := range qs {
		if qs[i] != qr[i] {
			t.Fatalf("q[%d] = %d, reference %d", i, qs[i], qr[i])
		}
	}
	for i := range ds {
		if ds[i] != dr[i] {
			t.Fatalf("ds[%d] = %v, reference %v", i, ds[i], dr[i])
		}
	}
}

// The assembly Q8_K quantizer equals quantizeQ8K bit for bit: on random
// blocks and on blocks built for its edges (all zeros, ties of magnitude
// between signs, halves that round to even, NaNs, infinities, values
// past float32's reach of 127·x, subnormals).
func TestQuantizeQ8KMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const nb = 24
	x := randRow(rng, nb*QKK, 3)
	blk := func(b int) []float32 { return x[b*QKK : (b+1)*QKK] }
	clear(blk(1))                                    // all zeros
	blk(2)[7], blk(2)[200] = -9, 9                   // a tie: the first (−9) sets the sign
	blk(3)[0], blk(3)[255] = 9, -9                   // and the other way
	blk(4)[3] = 127                                  // iscale −1: halves below
	blk(4)[4], blk(4)[5], blk(4)[6] = 2.5, -3.5, 0.5 // round to even
	blk(5)[10], blk(5)[74] = 50, float32(math.NaN()) // a NaN after the largest value in its lane
	for i := range blk(6) {                          // NaNs only
		blk(6)[i] = float32(math.NaN())
	}
	blk(7)[100] = float32(math.Inf(-1)) // an infinity
	blk(8)[9] = 3e38                    // large, finite
	for i := range blk(9) {             // subnormals
		blk(9)[i] = float32(rng.NormFloat64()) * 1e-40
	}
	blk(10)[0] = float32(math.Copysign(0, -1)) // −0 and zeros
	clear(blk(10)[1:])
	qs, ds, bs := make([]int8, nb*QKK), make([]float32, nb), make([]int16, nb*16)
	if !quantizeQ8KFast(qs, ds, bs, x) {
		t.Skip("no assembly Q8_K quantizer on this CPU")
	}
	for b := 0; b < nb; b++ {
		q := make([]int8, QKK)
		bsum := make([]int16, 16)
		var d float32
		quantizeQ8K(q, &d, bsum, blk(b))
		if math.Float32bits(d) != math.Float32bits(ds[b]) {
			t.Fatalf("block %d: d = %v, reference %v", b, ds[b], d)
		}
		for i := range q {
			if q[i] != qs[b*QKK+i] {
				t.Fatalf("block %d: q[%d] = %d, reference %d", b, i, qs[b*QKK+i], q[i])
			}
		}
		for i := range bsum {
			if bsum[i] != bs[b*16+i] {
				t.Fatalf("block %d: sum[%d] = %d, reference %d", b, i, bs[b*16+i], bsum[i])
			}
		}
	}
}

func TestRowBytesErrors(t *testing.T) {
	for _, c := range []struct {
		t    Type
		cols int
	}{{Q4_1, 33}, {Q4_K, 32}, {Type(99), 32}, {Q8_0, 0}} {
		if _, err := c.t.RowBytes(c.cols); err == nil {
			t.Errorf("%v cols %d: no error", c.t, c.cols)
		}
	}
	if _, err := NewMatrix(Q8_0, 2, 32, make([]byte, 34)); err == nil {
		t.Error("short data: no error")
	}
	_ = fmt.Sprint(Q4_K, Type(99))
}

// The four-token kernels equal the one-token reference per token, both
// variants this CPU can run.
func TestFastDots4MatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	for name, dots := range map[string]map[Type]dot4Func{"avx2": fastDots4(false, hasAVX2), "vnni": fastDots4(hasVNNI, hasAVX2)} {
		for ty, fast := range dots {
			const cols, T = 576, 6
			w := quantRows(ty, randRow(rng, cols, 0.05), 1, cols)
			var a Act
			a.Quantize(ty, randRow(rng, T*cols, 1), T, cols)
			for t0 := 0; t0+4 <= T; t0++ {
				var got [4]float32
				fast(w.Row(0), &a, t0, &got)
				for k := range got {
					want := dotRef[ty](w.Row(0), a.row(t0+k))
					if math.Abs(float64(got[k]-want)) > 1e-5*math.Abs(float64(want))+1e-4 {
						t.Errorf("%s %v token %d: fast %v, reference %v", name, ty, t0+k, got[k], want)
					}
				}
			}
		}
	}
}

// BenchmarkQuantizeQ8K quantizes a 190-token batch of Qwen2.5-1.5B's
// widest input (8,960) to Q8_K on one goroutine: the Go reference and the
// assembly (where the CPU has it) side by side, ns per super-block.
func BenchmarkQuantizeQ8K(b *testing.B) {
	rng := rand.New(rand.NewPCG(11, 12))
	const n = 190 * 8960
	x := randRow(rng, n, 1)
	qs, ds, bs := make([]int8, n), make([]float32, n/QKK), make([]int16, n/16)
	for _, name := range []string{"go", "asm"} {
		b.Run(name, func(b *testing.B) {
			if name == "asm" && !quantizeQ8KFast(qs, ds, bs, x) {
				b.Skip("no assembly Q8_K quantizer on this CPU")
			}
			for b.Loop() {
				if name == "asm" {
					quantizeQ8KFast(qs, ds, bs, x)
					continue
				}
				for i := range ds {
					quantizeQ8K(qs[i*QKK:(i+1)*QKK], &ds[i], bs[16*i:16*(i+1)], x[i*QKK:(i+1)*QKK])
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(ds)), "ns/superblock")
		})
	}
}
