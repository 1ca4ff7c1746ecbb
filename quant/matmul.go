package quant

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/clawrl/clawrl/blas"
)

// dots are the kernels the matmul runs, by weight type: assembly where
// this CPU has it, else the reference.
var dots = func() map[Type]func([]byte, actRow) float32 {
	m := fastDots(hasVNNI, hasAVX2)
	for t, f := range dotRef {
		if m[t] == nil {
			m[t] = f
		}
	}
	return m
}()

// Kernel names the dot product path this CPU runs for t (for benchmark
// tables).
func Kernel(t Type) string {
	if _, ok := fastDots(hasVNNI, hasAVX2)[t]; !ok {
		return "go"
	}
	if hasVNNI {
		return "avx512vnni"
	}
	return "avx2"
}

// dot4Func computes the dots of one weight row with activation rows
// t0..t0+3 of a.
type dot4Func func(w []byte, a *Act, t0 int, out *[4]float32)

// dots4 are the four-token kernels this CPU has.
var dots4 = fastDots4(hasVNNI, hasAVX2)

var actPool = sync.Pool{New: func() any { return new(Act) }}

// rowTile is how many weight rows one pass takes against every activation
// row: their blocks stay in L1 while the activations stream past.
const rowTile = 16

// dequantMinT is the batch from which MatMul widens tiles of weight rows
// to float32 and runs blas's f32 kernels instead of the int8 dot
// products; BENCHMARKS.md ("quantized kernels") has the measurements that
// chose it.
var dequantMinT = 1 << 30

// MatMul computes out[T, m.Rows] = x[T, m.Cols]·mᵀ on the quantized
// blocks: each activation row is quantized per block (as llama.cpp does),
// then goroutines split the weight rows.
func MatMul(out, x []float32, T int, m *Matrix) {
	if len(x) < T*m.Cols || len(out) < T*m.Rows {
		panic(fmt.Sprintf("quant: MatMul [%d, %d]·[%d, %d]ᵀ with len(x)=%d len(out)=%d", T, m.Cols, m.Rows, m.Cols, len(x), len(out)))
	}
	if T >= dequantMinT {
		matMulDequant(out, x, T, m)
		return
	}
	a := actPool.Get().(*Act)
	defer actPool.Put(a)
	a.Quantize(m.Type, x, T, m.Cols)
	dot, dot4 := dots[m.Type], dots4[m.Type]
	T4 := 0 // tokens done four at a time
	if dot4 != nil {
		T4 = T / 4 * 4
	}
	parallelRows(m.Rows, int64(T)*int64(len(m.Data)), func(r0, r1 int) {
		rows := make([]actRow, T) // small, per goroutine
		for t := range rows {
			rows[t] = a.row(t)
		}
		var o4 [4]float32
		for rt := r0; rt < r1; rt += rowTile {
			re := min(rt+rowTile, r1)
			for t := 0; t < T4; t += 4 {
				for r := rt; r < re; r++ {
					dot4(m.Data[r*m.rowBytes:(r+1)*m.rowBytes], a, t, &o4)
					out[t*m.Rows+r] = o4[0]
					out[(t+1)*m.Rows+r] = o4[1]
					out[(t+2)*m.Rows+r] = o4[2]
					out[(t+3)*m.Rows+r] = o4[3]
				}
			}
			for t := T4; t < T; t++ {
				o, ar := out[t*m.Rows:(t+1)*m.Rows], rows[t]
				for r := rt; r < re; r++ {
					o[r] = dot(m.Data[r*m.rowBytes:(r+1)*m.rowBytes], ar)
				}
			}
		}
	})
}

// matMulDequant is MatMul through float32: tiles of weight rows widened
// and multiplied by blas (x itself is not quantized).
func matMulDequant(out, x []float32, T int, m *Matrix) {
	const tile = 64
	parallelRows(m.Rows, int64(T)*int64(len(m.Data)), func(r0, r1 int) {
		w := make([]float32, tile*m.Cols)
		for rt := r0; rt < r1; rt += tile {
			re := min(rt+tile, r1)
			m.DequantizeRows(w, rt, re)
			blas.SgemmGo(false, true, T, re-rt, m.Cols, 1, x, m.Cols, w, m.Cols, 0, out[rt:], m.Rows)
		}
	})
}

// DequantizeRows widens rows [r0, r1) into dst[(r1-r0)·Cols].
func (m *Matrix) DequantizeRows(dst []float32, r0, r1 int) {
	DequantizeRow(m.Type, dst[:(r1-r0)*m.Cols], m.Data[r0*m.rowBytes:r1*m.rowBytes])
}

// MatMulNN computes out[T, m.Cols] = dy[T, m.Rows]·m (the input gradient
// of y = x·mᵀ) by widening tiles of rows and running blas's f32 kernels:
// the backward needs no quantized activations, and the result is the one
// the dequantized matrix gives. accumulate adds into out instead of
// overwriting it.
func MatMulNN(out, dy []float32, T int, m *Matrix, accumulate bool) {
	if len(dy) < T*m.Rows || len(out) < T*m.Cols {
		panic(fmt.Sprintf("quant: MatMulNN [%d, %d]·[%d, %d] with len(dy)=%d len(out)=%d", T, m.Rows, m.Rows, m.Cols, len(dy), len(out)))
	}
	const tile = 128
	w := make([]float32, tile*m.Cols)
	for rt := 0; rt < m.Rows; rt += tile {
		re := min(rt+tile, m.Rows)
		m.DequantizeRows(w, rt, re)
		var beta float32 = 1
		if rt == 0 && !accumulate {
			beta = 0
		}
		blas.Sgemm(false, false, T, m.Cols, re-rt, 1, dy[rt:], m.Rows, w, m.Cols, beta, out, m.Cols)
	}
}

// parallelRows splits [0, n) rows across GOMAXPROCS goroutines in
// rowTile-aligned chunks when the bytes to stream justify the start-up.
func parallelRows(n int, work int64, fn func(r0, r1 int)) {
	workers := runtime.GOMAXPROCS(0)
	if work < 1<<15 || workers <= 1 || n <= rowTile {
		fn(0, n)
		return
	}
	chunks := min(workers, (n+rowTile-1)/rowTile)
	per := ((n+chunks-1)/chunks + rowTile - 1) / rowTile * rowTile
	var wg sync.WaitGroup
	for lo := per; lo < n; lo += per {
		hi := min(lo+per, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(lo, hi)
		}()
	}
	fn(0, min(per, n))
	wg.Wait()
}
