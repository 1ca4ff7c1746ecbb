package quant

import (
	"math"
	"math/rand/v2"
	"testing"
)

// MatMulRows gives rows [r0, r1) of MatMul's product bitwise, on group
// boundaries (the packed copy) and off them (a view), for token counts
// that use the four-token kernels and the one-token tail.
func TestMatMulRowsBitwise(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	for _, ty := range []Type{Q8_0, Q5_0, Q4_K} {
		const rows, cols = 48, 512
		m := quantRows(ty, randRow(rng, rows*cols, 0.05), rows, cols)
		for _, T := range []int{1, 3, 4, 7} {
			x := randRow(rng, T*cols, 1)
			want := make([]float32, T*rows)
			MatMul(want, x, T, m)
			for _, rr := range [][2]int{{0, rows}, {8, 32}, {16, 24}, {12, 36}, {5, 6}} {
				r0, r1 := rr[0], rr[1]
				ldo := r1 - r0 + 3
				out := make([]float32, T*ldo)
				if err := MatMulRows(out, ldo, x, T, m, r0, r1); err != nil {
					t.Fatal(err)
				}
				for tk := range T {
					for r := r0; r < r1; r++ {
						if g, w := out[tk*ldo+r-r0], want[tk*rows+r]; math.Float32bits(g) != math.Float32bits(w) {
							t.Fatalf("%v T=%d rows [%d, %d): token %d row %d = %v, MatMul %v", ty, T, r0, r1, tk, r, g, w)
						}
					}
				}
			}
		}
		for _, rr := range [][2]int{{-1, 8}, {0, rows + 1}, {8, 8}} {
			if err := MatMulRows(make([]float32, 4*rows), rows, make([]float32, 4*cols), 4, m, rr[0], rr[1]); err == nil {
				t.Errorf("%v rows [%d, %d): no error", ty, rr[0], rr[1])
			}
		}
		if err := MatMulRows(make([]float32, 10), rows, make([]float32, 4*cols), 4, m, 0, 8); err == nil {
			t.Errorf("%v: short out, no error", ty)
		}
	}
}
