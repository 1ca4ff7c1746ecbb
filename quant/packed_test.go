package quant

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The packed eight-row kernels (each variant this CPU runs) equal the
// one-row kernels of the same variant bitwise (the same float operations
// per row, llama.cpp's), which the other tests hold to the reference; so
// does MatMul through the packed path.
func TestPackedKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	const rows, cols = 24, 576
	for _, ty := range []Type{Q4_1, Q8_0} {
		m := quantRows(ty, randRow(rng, rows*cols, 0.05), rows, cols)
		if ty == Q8_0 { // the extreme weights: -128 (files may hold it) and 127
			m.Data[2], m.Data[3] = 0x80, 0x7f
		}
		pk := pack(m)
		nb := cols / QK
		gsize := nb * packedBlockBytes(ty)
		x := randRow(rng, cols, 1)
		x[5] = 40 // one large activation: some q = ±127
		var a Act
		a.Quantize(ty, x, 1, cols)
		a.fillSums4()
		ran := 0
		for _, v := range []struct {
			name     string
			vnni     bool
			packed   gemv8Func
			dot, ref func([]byte, actRow) float32
		}{
			{"avx2", false, fastGemv8(false, false, hasAVX2)[ty], fastDots(false, hasAVX2)[ty], dotRef[ty]},
			{"vnni", true, fastGemv8(hasVNNI, false, hasAVX2)[ty], fastDots(hasVNNI, hasAVX2)[ty], dotRef[ty]},
		} {
			if v.packed == nil || v.vnni && !hasVNNI {
				continue
			}
			for g := 0; g < rows/packRows; g++ {
				var got [packRows]float32
				v.packed(nb, &pk[g*gsize], &a.qs[0], &a.ds[0], &a.sums4[0], &got[0])
				for r := 0; r < packRows; r++ {
					row := g*packRows + r
					want := v.dot(m.Row(row), a.row(0))
					if math.Float32bits(got[r]) != math.Float32bits(want) {
						t.Fatalf("%v %s row %d: packed %v, one-row %v (reference %v)", ty, v.name, row, got[r], want, v.ref(m.Row(row), a.row(0)))
					}
					ran++
				}
			}
		}
		t.Logf("%v: %d packed rows checked", ty, ran)
		if m.packedData() == nil {
			continue // no packed kernel on this CPU
		}
		for T := 1; T <= 5; T++ {
			xs := randRow(rng, T*cols, 1)
			var at Act
			at.Quantize(ty, xs, T, cols)
			out := make([]float32, T*rows)
			MatMul(out, xs, T, m)
			for tk := 0; tk < T; tk++ {
				for r := 0; r < rows; r++ {
					want := dots[ty](m.Row(r), at.row(tk))
					if got := out[tk*rows+r]; math.Float32bits(got) != math.Float32bits(want) {
						t.Fatalf("%v T=%d: out[%d,%d] = %v, one-row kernel %v", ty, T, tk, r, got, want)
					}
				}
			}
		}
	}
}

// MatMulShared equals MatMul on each matrix bitwise (the packed path, and
// the fallback when the matrices cannot share).
func TestMatMulShared(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	for _, types := range [][]Type{{Q4_1, Q4_1, Q4_1}, {Q4_1, Q8_0}, {Q4_K, Q6_K}, {Q4_1, Q4_K}} {
		ms := []*Matrix{}
		cols, rows := 256, []int{8, 24, 40}
		if types[0] == Q4_1 && len(types) == 3 { // big enough for both workers
			cols, rows = 576, []int{576, 192, 192}
		}
		for i, ty := range types {
			ms = append(ms, quantRows(ty, randRow(rng, rows[i]*cols, 0.05), rows[i], cols))
		}
		for _, T := range []int{1, 3, 4, 9, 37} {
			x := randRow(rng, T*cols, 1)
			outs := make([][]float32, len(ms))
			for i, m := range ms {
				outs[i] = make([]float32, T*m.Rows)
			}
			MatMulShared(outs, x, T, ms)
			for i, m := range ms {
				want := make([]float32, T*m.Rows)
				MatMul(want, x, T, m)
				for j := range want {
					if math.Float32bits(outs[i][j]) != math.Float32bits(want[j]) {
						t.Fatalf("%v T=%d matrix %d: out[%d] = %v, MatMul %v", types, T, i, j, outs[i][j], want[j])
					}
				}
			}
		}
	}
}
