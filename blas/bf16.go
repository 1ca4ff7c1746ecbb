package blas

import (
	"fmt"
	"math"
)

// bf16DirectMaxRows is the number of rows of x up to which SgemmBF16 reads
// bf16 weights directly (decode: bandwidth-bound, half the bytes of f32);
// above it, weights are widened panel by panel and handed to Sgemm, which is
// compute-bound there anyway.
const bf16DirectMaxRows = 8

// bf16PanelRows is how many weight rows are widened to f32 at a time.
const bf16PanelRows = 128

// SgemmBF16 computes Y = alpha·X·Wᵀ + beta·Y where X is m×k float32 (row
// stride ldx), W is n×k bfloat16 bits (row stride ldw) and Y is m×n (row
// stride ldy): a linear layer with weights kept in bf16.
func SgemmBF16(m, n, k int, alpha float32, x []float32, ldx int, w []uint16, ldw int, beta float32, y []float32, ldy int) {
	if m < 0 || n < 0 || k < 0 || (m > 0 && k > 0 && len(x) < (m-1)*ldx+k) || (n > 0 && k > 0 && len(w) < (n-1)*ldw+k) || (m > 0 && n > 0 && len(y) < (m-1)*ldy+n) {
		panic(fmt.Sprintf("blas: SgemmBF16 m=%d n=%d k=%d with len(x)=%d len(w)=%d len(y)=%d", m, n, k, len(x), len(w), len(y)))
	}
	if m == 0 || n == 0 {
		return
	}
	if m <= bf16DirectMaxRows {
		parallelFor(n, 4, 2*int64(m)*int64(n)*int64(k), func(j0, j1 int) {
			bf16Direct(m, j0, j1, k, alpha, x, ldx, w, ldw, beta, y, ldy)
		})
		return
	}
	panel := make([]float32, min(n, bf16PanelRows)*k)
	for j0 := 0; j0 < n; j0 += bf16PanelRows {
		j1 := min(j0+bf16PanelRows, n)
		rows := j1 - j0
		p := panel[:rows*k]
		for r := 0; r < rows; r++ {
			WidenBF16(p[r*k:(r+1)*k], w[(j0+r)*ldw:(j0+r)*ldw+k])
		}
		Sgemm(false, true, m, rows, k, alpha, x, ldx, p, k, beta, y[j0:], ldy)
	}
}

// WidenBF16 converts bf16 bits in src to float32 in dst (exact).
func WidenBF16(dst []float32, src []uint16) {
	dst = dst[:len(src)]
	for i, b := range src {
		dst[i] = math.Float32frombits(uint32(b) << 16)
	}
}

// bf16Direct computes columns [j0,j1) reading each weight row once and
// widening on the fly, for every row of x at once.
func bf16Direct(m, j0, j1, k int, alpha float32, x []float32, ldx int, w []uint16, ldw int, beta float32, y []float32, ldy int) {
	store := func(i, j int, s float32) {
		p := &y[i*ldy+j]
		if beta == 0 {
			*p = alpha * s
		} else {
			*p = float32(alpha*s) + float32(beta**p)
		}
	}
	if k8 := k &^ 7; useAVX2 && k8 > 0 {
		var t4 [4]float32
		for ; j0+4 <= j1; j0 += 4 {
			_ = w[(j0+3)*ldw+k-1]
			for i := 0; i < m; i++ {
				xi := x[i*ldx : i*ldx+k]
				kern1x4bf16(k8, &xi[0], &w[j0*ldw], ldw, &t4)
				for q := 0; q < 4; q++ {
					s := t4[q]
					wq := w[(j0+q)*ldw : (j0+q)*ldw+k]
					for p := k8; p < k; p++ {
						s += float32(xi[p] * math.Float32frombits(uint32(wq[p])<<16))
					}
					store(i, j0+q, s)
				}
			}
		}
	}
	var widened []float32
	for j := j0; j < j1; j++ {
		wj := w[j*ldw : j*ldw+k]
		if useAVX2 && k >= 8 {
			// Same summation order as the kernels (see gemmNTRangeAVX2).
			if widened == nil {
				widened = make([]float32, k)
			}
			WidenBF16(widened, wj)
			k8 := k &^ 7
			for i := 0; i < m; i++ {
				xi := x[i*ldx : i*ldx+k]
				s := kern1x1(k8, &xi[0], &widened[0])
				for p := k8; p < k; p++ {
					s += float32(xi[p] * widened[p])
				}
				store(i, j, s)
			}
			continue
		}
		for i := 0; i < m; i++ {
			store(i, j, dotBF16(x[i*ldx:i*ldx+k], wj))
		}
	}
}

// dotBF16 is the dot product of float32 x with bf16 w, summed as dotLanes
// sums it (the portable Sgemm kernels' order), so the direct and the
// widened paths agree.
func dotBF16(x []float32, w []uint16) float32 {
	w = w[:len(x)]
	k8 := len(x) &^ 7
	var l [8]float32
	for p := 0; p < k8; p += 8 {
		for i := range 8 {
			l[i] += float32(x[p+i] * math.Float32frombits(uint32(w[p+i])<<16))
		}
	}
	s := reduceLanes(l[0], l[1], l[2], l[3], l[4], l[5], l[6], l[7])
	for p := k8; p < len(x); p++ {
		s += float32(x[p] * math.Float32frombits(uint32(w[p])<<16))
	}
	return s
}
