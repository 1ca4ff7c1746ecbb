package quant

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// randomBlocks is a [rows, cols] matrix of t whose blocks are random bytes
// (every nibble and byte value a file may hold) with scales set to modest
// float16 values.
func randomBlocks(rng *rand.Rand, t Type, rows, cols int) *Matrix {
	rb, _ := t.RowBytes(cols)
	data := make([]byte, rows*rb)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	bb := t.BlockBytes()
	for b := 0; b < len(data)/bb; b++ {
		blk := data[b*bb:]
		// d (and m or dmin): ±2^-8·(1..2), so no float overflows.
		offs := []int{0, 2}
		if t == Q6_K {
			offs = []int{208}
		}
		for _, off := range offs {
			blk[off], blk[off+1] = byte(rng.Uint32()), 0x1c|byte(rng.Uint32()&0x80)|byte(rng.Uint32()&3)
		}
	}
	m, err := NewMatrix(t, rows, cols, data)
	if err != nil {
		panic(err)
	}
	return m
}

// f32KernelSets are the sets of float32-activation kernels a CPU may run:
// all of this one's, without the AVX-512 ones (an AVX2 CPU), and the
// one-token kernel alone.
var f32KernelSets = []string{"all", "avx2", "one-token"}

// useF32Kernels makes MatMul run the kernel set named (f32KernelSets) until
// the returned function restores this CPU's.
func useF32Kernels(set string) (restore func()) {
	saved := f32KernelsFor
	f32KernelsFor = map[Type]f32Kernels{}
	for ty, ks := range saved {
		if set != "all" {
			ks.one16, ks.multi16 = nil, nil
		}
		if set == "one-token" {
			ks.multi = nil
		}
		f32KernelsFor[ty] = ks
	}
	return func() { f32KernelsFor = saved }
}

// With F32Activations, MatMul equals the float64 dot of the dequantized
// weights with the unrounded activations within float32 rounding (a bound
// 100× tighter than the int8 path's), with every set of packed kernels and
// on the widened-tile path (matrices with no packed copy), for quantized
// and for random-byte blocks; 37 rows take the tile path.
func TestF32ActivationsMatchDequantized(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, ty := range allTypes {
		for _, rows := range []int{64, 37} {
			const cols = 512
			for _, src := range []string{"quantized", "random"} {
				m := quantRows(ty, randRow(rng, rows*cols, 0.05), rows, cols)
				if src == "random" {
					if ty != Q4_1 && ty != Q8_0 {
						continue // the reference dequantizer is the same code either way
					}
					m = randomBlocks(rng, ty, rows, cols)
				}
				m.F32Activations = true
				wf := make([]float32, rows*cols)
				m.DequantizeRows(wf, 0, rows)
				for _, T := range []int{1, 3, 9} {
					x := randRow(rng, T*cols, 1)
					for _, path := range f32KernelSets {
						restore := useF32Kernels(path)
						out := make([]float32, T*rows)
						MatMul(out, x, T, m)
						restore()
						for tk := 0; tk < T; tk++ {
							for r := 0; r < rows; r++ {
								var want, mag float64
								for i := 0; i < cols; i++ {
									p := float64(wf[r*cols+i]) * float64(x[tk*cols+i])
									want += p
									mag += math.Abs(p)
								}
								if got := float64(out[tk*rows+r]); math.Abs(got-want) > 1e-5*mag+1e-6 {
									t.Fatalf("%v %s rows=%d T=%d %s: out[%d,%d] = %v, want %v (Σ|w·x| %v)", ty, src, rows, T, path, tk, r, got, want, mag)
								}
							}
						}
					}
				}
			}
		}
	}
}

// MatMulShared on float32-activation matrices equals MatMul on each,
// bitwise (one region or several, each row's sum is the same code).
func TestF32ActivationsShared(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	const cols = 576
	for _, T := range []int{1, 4, 20} {
		ms := []*Matrix{
			quantRows(Q4_1, randRow(rng, 64*cols, 0.05), 64, cols),
			quantRows(Q8_0, randRow(rng, 32*cols, 0.05), 32, cols),
			quantRows(Q4_1, randRow(rng, 16*cols, 0.05), 16, cols),
		}
		x := randRow(rng, T*cols, 1)
		outs := make([][]float32, len(ms))
		for i, m := range ms {
			m.F32Activations = true
			outs[i] = make([]float32, T*m.Rows)
		}
		MatMulShared(outs, x, T, ms)
		for i, m := range ms {
			want := make([]float32, T*m.Rows)
			MatMul(want, x, T, m)
			for j := range want {
				if outs[i][j] != want[j] {
					t.Fatalf("T=%d matrix %d: shared[%d] = %v, MatMul %v", T, i, j, outs[i][j], want[j])
				}
			}
		}
	}
}

// BenchmarkF32Activations times the demo model's shapes (Q4_1 gate/up
// 1536×576 and down 576×1536, the Q8_0 head 49152×576) with float32
// activations on this CPU's packed kernels (f32), on the AVX2 ones (f32avx2)
// and on widened tiles through blas (f32tiles, not batch-invariant: the
// path before the two- and four-token kernels), beside the int8 packed
// kernels, per batch.
func BenchmarkF32Activations(b *testing.B) {
	rng := rand.New(rand.NewPCG(25, 26))
	shapes := []struct {
		name       string
		t          Type
		rows, cols int
	}{{"gate_up", Q4_1, 1536, 576}, {"down", Q4_1, 576, 1536}, {"head", Q8_0, 49152, 576}}
	for _, s := range shapes {
		m := quantRows(s.t, randRow(rng, s.rows*s.cols, 0.05), s.rows, s.cols)
		for _, T := range []int{1, 2, 4, 8, 16, 32, 64, 190} {
			x := randRow(rng, T*s.cols, 1)
			out := make([]float32, T*s.rows)
			for _, path := range []string{"int8", "f32", "f32avx2", "f32tiles"} {
				b.Run(fmt.Sprintf("%s_%v_%dx%d/T=%d/%s", s.name, s.t, s.rows, s.cols, T, path), func(b *testing.B) {
					defer func() { m.F32Activations = false }()
					m.F32Activations = path != "int8"
					if path == "f32avx2" {
						defer useF32Kernels("avx2")()
					}
					cpu0 := processCPU()
					for b.Loop() {
						if path == "f32tiles" {
							matMulDequant(out, x, T, m)
						} else {
							MatMul(out, x, T, m)
						}
					}
					b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
				})
			}
		}
	}
}

// Widening rows from the packed copy gives DequantizeRows' values bitwise
// (random-byte blocks: every nibble and byte), so the tile path's numbers
// do not depend on whether decode has packed the matrix yet.
func TestUnpackRowsEqualsDequantize(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 30))
	for _, ty := range []Type{Q4_1, Q8_0} {
		const rows, cols = 24, 96
		m := randomBlocks(rng, ty, rows, cols)
		pk := pack(m)
		want := make([]float32, rows*cols)
		m.DequantizeRows(want, 0, rows)
		got := make([]float32, 16*cols)
		if !m.unpackRows(got, pk, 8, 24) {
			t.Fatalf("%v: not unpacked", ty)
		}
		for i, v := range got {
			if math.Float32bits(v) != math.Float32bits(want[8*cols+i]) {
				t.Fatalf("%v: value %d = %v, DequantizeRows %v", ty, i, v, want[8*cols+i])
			}
		}
	}
}

// kernelInputs makes a [rows, cols] matrix m of t's random-byte blocks and
// its packed copy pk, and draws float32 activations of mixed magnitude for
// tokens tokens (rows of x cols apart); sums(i) is token i's block sums as
// the kernels take them.
func kernelInputs(rng *rand.Rand, t Type, rows, cols, tokens int) (m *Matrix, pk []byte, nb, gsize int, x []float32, sums func(i int) *float32) {
	m = randomBlocks(rng, t, rows, cols)
	pk = pack(m)
	nb = cols / QK
	gsize = nb * packedBlockBytes(t)
	x = randRow(rng, tokens*cols, 3)
	for i := range x {
		x[i] *= float32(math.Exp(rng.NormFloat64()))
	}
	sx := blockSums(t, x)
	return m, pk, nb, gsize, x, func(i int) *float32 {
		if sx == nil {
			return nil
		}
		return &sx[i*nb]
	}
}

// f32RefRow is the float32-activation kernels' order of sums in Go
// (packedf32_gen.go), each FMA rounded once as the hardware's: row r of m
// against one token's activations x.
func f32RefRow(m *Matrix, r int, x []float32) float32 {
	fma := func(a, b, c float32) float32 {
		var p, s big.Float
		p.SetPrec(200).SetFloat64(float64(a)).Mul(&p, new(big.Float).SetFloat64(float64(b)))
		s.SetPrec(200).Add(&p, new(big.Float).SetFloat64(float64(c)))
		f, _ := s.Float32()
		return f
	}
	row := m.Row(r)
	bb := m.Type.BlockBytes()
	var sum float32
	for b := 0; b < m.Cols/QK; b++ {
		blk := row[b*bb : (b+1)*bb]
		xb := x[b*QK : (b+1)*QK]
		var p [2]float32
		d := F16ToF32(uint16(blk[0]) | uint16(blk[1])<<8)
		switch m.Type {
		case Q4_1:
			qs := blk[4:20]
			for k := range 4 {
				for i := range 4 {
					p[i%2] = fma(float32(qs[4*k+i]&0x0f), xb[4*k+i], p[i%2])
				}
				for i := range 4 {
					p[i%2] = fma(float32(qs[4*k+i]>>4), xb[16+4*k+i], p[i%2])
				}
			}
		case Q8_0:
			qs := blk[2:34]
			for k := range 8 {
				for i := range 4 {
					p[i%2] = fma(float32(int8(qs[4*k+i])), xb[4*k+i], p[i%2])
				}
			}
		}
		sum = fma(d, p[0]+p[1], sum)
		if m.Type == Q4_1 {
			var sx float32
			for _, v := range xb {
				sx += v
			}
			sum = fma(F16ToF32(uint16(blk[2])|uint16(blk[3])<<8), sx, sum)
		}
	}
	return sum
}

// The one-token kernel sums in the order f32RefRow writes down, bitwise
// (random-byte blocks, activations of mixed magnitude); every other kernel
// is held to the one-token kernel's bits below.
func TestF32KernelOrder(t *testing.T) {
	if len(f32KernelsFor) == 0 {
		t.Skip("no float32-activation kernels on this CPU (AVX2)")
	}
	rng := rand.New(rand.NewPCG(47, 48))
	for ty, ks := range f32KernelsFor {
		k := ks.one
		for _, cols := range []int{32, 96, 576} {
			const rows = 16
			m, pk, nb, gsize, x, sums := kernelInputs(rng, ty, rows, cols, 1)
			for g := 0; g < rows/packRows; g++ {
				var got [8]float32
				k(nb, &pk[g*gsize], &x[0], sums(0), &got[0])
				for r, v := range got {
					if want := f32RefRow(m, g*packRows+r, x); math.Float32bits(v) != math.Float32bits(want) {
						t.Fatalf("%v cols %d row %d: kernel %v, the order in Go %v", ty, cols, g*packRows+r, v, want)
					}
				}
			}
		}
	}
}

// The two-group (AVX-512) kernels, and their eight-, four- and two-token
// forms, give each row the eight-row kernel's sum bitwise: random-byte
// blocks (every nibble and byte value), activations of mixed magnitude,
// every pair of groups of a matrix with an odd group count (the last group
// runs on the eight-row kernel in MatMul), block counts odd and even (the
// one- and two-token kernels take blocks in pairs).
func TestF32SixteenRowKernelsBitwise(t *testing.T) {
	if !hasAVX512 {
		t.Skip("no 16-row float32-activation kernels on this CPU (AVX-512 BW)")
	}
	rng := rand.New(rand.NewPCG(41, 42))
	for ty, ks := range f32KernelsFor {
		k, k16 := ks.one, ks.one16
		if got := tokenCounts(ks.multi16); k16 == nil || got != "8 4 2" {
			t.Fatalf("%v: 16-row kernels for %q tokens, want 1 and 8 4 2", ty, got)
		}
		for _, cols := range []int{32, 96, 576, 1536} {
			const rows = 40 // five groups
			_, pk, nb, gsize, x, sums := kernelInputs(rng, ty, rows, cols, 9)
			for g := 0; g+1 < rows/packRows; g++ {
				var want, got [16]float32
				k(nb, &pk[g*gsize], &x[0], sums(0), &want[0])
				k(nb, &pk[(g+1)*gsize], &x[0], sums(0), &want[8])
				k16(nb, &pk[g*gsize], gsize, &x[0], sums(0), &got[0])
				for r := range want {
					if math.Float32bits(got[r]) != math.Float32bits(want[r]) {
						t.Fatalf("%v cols %d groups %d,%d row %d: 16-row kernel %v, 8-row %v", ty, cols, g, g+1, r, got[r], want[r])
					}
				}
			}
			// n tokens from token 1 (outputs 24 apart): each token's
			// outputs are the one-token kernel's.
			const ldo = 24
			for _, mk := range ks.multi16 {
				for g := 0; g+1 < rows/packRows; g++ {
					want, got := make([]float32, 9*ldo), make([]float32, 9*ldo)
					for tk := 1; tk <= mk.n; tk++ {
						k(nb, &pk[g*gsize], &x[tk*cols], sums(tk), &want[tk*ldo])
						k(nb, &pk[(g+1)*gsize], &x[tk*cols], sums(tk), &want[tk*ldo+8])
					}
					mk.k(nb, &pk[g*gsize], gsize, &x[cols], 4*cols, sums(1), 4*nb, &got[ldo], 4*ldo)
					for i := range want {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%v cols %d groups %d,%d token %d row %d: %d-token kernel %v, one-token %v", ty, cols, g, g+1, i/ldo, i%ldo, mk.n, got[i], want[i])
						}
					}
				}
			}
		}
	}
}

// The four- and two-token (AVX2) kernels give each token the one-token
// kernel's outputs bitwise.
func TestF32MultiTokenKernelsBitwise(t *testing.T) {
	if len(f32KernelsFor) == 0 {
		t.Skip("no multi-token float32-activation kernels on this CPU (AVX2)")
	}
	rng := rand.New(rand.NewPCG(45, 46))
	for ty, ks := range f32KernelsFor {
		k := ks.one
		if got := tokenCounts(ks.multi); got != "4 2" {
			t.Fatalf("%v: multi-token kernels for %q tokens, want 4 2", ty, got)
		}
		for _, cols := range []int{32, 96, 576, 1536} {
			const rows = 24
			_, pk, nb, gsize, x, sums := kernelInputs(rng, ty, rows, cols, 5)
			const ldo = 12
			for _, mk := range ks.multi {
				for g := 0; g < rows/packRows; g++ {
					want, got := make([]float32, 5*ldo), make([]float32, 5*ldo)
					for tk := 1; tk <= mk.n; tk++ {
						k(nb, &pk[g*gsize], &x[tk*cols], sums(tk), &want[tk*ldo])
					}
					mk.k(nb, &pk[g*gsize], &x[cols], 4*cols, sums(1), 4*nb, &got[ldo], 4*ldo)
					for i := range want {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%v cols %d group %d token %d row %d: %d-token kernel %v, one-token %v", ty, cols, g, i/ldo, i%ldo, mk.n, got[i], want[i])
						}
					}
				}
			}
		}
	}
}

// With F32Activations, a token's outputs do not depend on the batch it
// runs in: MatMul, MatMulShared and MatMulRows of T tokens give each token
// the bits MatMul gives it alone, at every batch (the one-token kernel's
// order of sums is the canonical one). Serving relies on it: a request's
// logits must not change with how many others share its decode step or how
// much of its prompt the prefix cache held, and the trainer's π_old must
// equal the behaviour log-probabilities.
func TestF32ActivationsBatchInvariant(t *testing.T) {
	for _, set := range f32KernelSets {
		restore := useF32Kernels(set)
		t.Run(set, testF32BatchInvariant)
		restore()
	}
}

func testF32BatchInvariant(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	const cols = 576
	for _, ty := range []Type{Q4_1, Q8_0} {
		m := randomBlocks(rng, ty, 40, cols) // five groups: a pair-less one
		m.F32Activations = true
		m2 := randomBlocks(rng, ty, 24, cols)
		m2.F32Activations = true
		const maxT = 70
		x := randRow(rng, maxT*cols, 2)
		for i := range x {
			x[i] *= float32(math.Exp(rng.NormFloat64()))
		}
		alone := func(m *Matrix) []float32 {
			out := make([]float32, maxT*m.Rows)
			for tk := 0; tk < maxT; tk++ {
				MatMul(out[tk*m.Rows:(tk+1)*m.Rows], x[tk*cols:(tk+1)*cols], 1, m)
			}
			return out
		}
		want, want2 := alone(m), alone(m2)
		check := func(what string, T int, got, want []float32, rows, ld, r0 int) {
			t.Helper()
			for tk := 0; tk < T; tk++ {
				for r := 0; r < rows; r++ {
					if g, w := got[tk*ld+r], want[tk*m.Rows+r0+r]; math.Float32bits(g) != math.Float32bits(w) {
						t.Fatalf("%v %s T=%d: token %d row %d = %v, alone %v", ty, what, T, tk, r0+r, g, w)
					}
				}
			}
		}
		for _, T := range []int{2, 3, 4, 5, 7, 8, 9, 16, 31, 32, 33, 40, maxT} {
			out := make([]float32, T*m.Rows)
			MatMul(out, x, T, m)
			check("MatMul", T, out, want, m.Rows, m.Rows, 0)
			outs := [][]float32{make([]float32, T*m.Rows), make([]float32, T*m2.Rows)}
			MatMulShared(outs, x, T, []*Matrix{m, m2})
			check("MatMulShared", T, outs[0], want, m.Rows, m.Rows, 0)
			for tk := 0; tk < T; tk++ {
				for r := 0; r < m2.Rows; r++ {
					if g, w := outs[1][tk*m2.Rows+r], want2[tk*m2.Rows+r]; math.Float32bits(g) != math.Float32bits(w) {
						t.Fatalf("%v MatMulShared T=%d: second matrix token %d row %d = %v, alone %v", ty, T, tk, r, g, w)
					}
				}
			}
			const r0, r1, ldo = 5, 29, 30
			rows := make([]float32, T*ldo)
			if err := MatMulRows(rows, ldo, x, T, m, r0, r1); err != nil {
				t.Fatal(err)
			}
			check("MatMulRows", T, rows, want, r1-r0, ldo, r0)
		}
	}
}

// packedf32_amd64.s is what packedf32_gen.go writes today.
func TestPackedF32Generated(t *testing.T) { checkGenerated(t, "packedf32_gen.go", "packedf32_amd64.s") }

// checkGenerated fails when file is not what the generator gen writes.
func checkGenerated(t *testing.T, gen, file string) {
	if testing.Short() {
		t.Skip("runs the generator with go run")
	}
	out := filepath.Join(t.TempDir(), file)
	if b, err := exec.Command("go", "run", gen, "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("go run %s: %v\n%s", gen, err, b)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is not %s's output: run go generate ./quant", file, gen)
	}
}

// tokenCounts lists the tokens per call of kernels, "8 4 2".
func tokenCounts[F any](kernels []tokensKernel[F]) string {
	var ns []string
	for _, k := range kernels {
		ns = append(ns, fmt.Sprint(k.n))
	}
	return strings.Join(ns, " ")
}
