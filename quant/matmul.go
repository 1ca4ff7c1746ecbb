package quant

import (
	"fmt"
	"sync"
	"sync/atomic"

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
// tables): "packed" when rows come in groups of eight on the packed
// kernels (packed.go), then the instruction set, or "go" for the
// reference.
func Kernel(t Type) string {
	_, one := fastDots(hasVNNI, hasAVX2)[t]
	_, packed := fastGemv8(hasVNNI, hasAVXVNNI, hasAVX2)[t]
	_, avxvnni := fastGemv8x2(false, hasAVXVNNI, false)[t] // the types with AVX-VNNI kernels
	isa := "avx2"
	switch {
	case hasVNNI:
		isa = "avx512vnni"
	case avxvnni:
		isa = "avxvnni"
	}
	switch {
	case packed:
		return "packed " + isa
	case one:
		return isa
	}
	return "go"
}

// HasKernel reports whether this CPU runs t's products with 8-bit
// activations (MatMul's default) on assembly kernels; without them they
// run the pure-Go reference dots, slower than blas on a float32 copy.
func HasKernel(t Type) bool { return Kernel(t) != "go" }

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
	if m.F32Activations {
		matMulF32(out, x, T, m)
		return
	}
	if T >= dequantMinT {
		matMulDequant(out, x, T, m)
		return
	}
	a := actPool.Get().(*Act)
	defer actPool.Put(a)
	a.Quantize(m.Type, x, T, m.Cols)
	if pk := m.packedData(); pk != nil && T < packedMaxT {
		matMulPacked(out, a, T, m, pk)
		return
	}
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

// packedMaxT is the batch below which MatMul runs the packed eight-row
// kernels (packed.go) where the CPU has them; from it on, the four-token
// one-row kernels would. The packed ones won at every batch measured (1 to
// 256 tokens: BENCHMARKS.md, "packed decode kernels"), so it is unlimited;
// the results are the same bitwise either way.
var packedMaxT = 1 << 30

// matMulPacked runs the packed kernel for each group of eight rows and each
// token: one group's blocks (nb·160 bytes for Q4_1) stay in L1 while the
// tokens pass.
func matMulPacked(out []float32, a *Act, T int, m *Matrix, pk []byte) {
	a.prepare(m.Type)
	parallelRows(m.Rows, int64(T)*int64(len(m.Data)), func(r0, r1 int) {
		packedGroups(out, m.Rows, 0, a, T, m, pk, r0/packRows, r1/packRows)
	})
}

// packedGroups runs groups [g0, g1) of m's packed copy pk for T tokens:
// row r of m for token t lands at out[t·ldo + r − c0]. Where the CPU has
// AMX-INT8 and m's type a tile kernel (amxk.go), pairs of groups take
// their tokens sixteen at a time on the tiles, the rest on the kernels
// below; every output is the same bits either way.
func packedGroups(out []float32, ldo, c0 int, a *Act, T int, m *Matrix, pk []byte, g0, g1 int) {
	k, k4, k2 := gemv8[m.Type], gemv8x4[m.Type], gemv8x2[m.Type]
	nb := m.Cols / m.Type.BlockSize()
	gsize := nb * packedBlockBytes(m.Type)
	// rest runs tokens [t0, T) of group g: four at a time, then two, then
	// one.
	rest := func(g, t0 int) {
		w := &pk[g*gsize]
		t := t0
		for ; t+4 <= T && k4 != nil; t += 4 {
			k4(nb, w, &a.qs[t*m.Cols], m.Cols, a.scales(t), a.scaleStride(), a.sums(m.Type, t), 4*sumsPerRow(m.Type, a.Cols), &out[t*ldo+g*packRows-c0], 4*ldo)
		}
		for ; t+2 <= T && k2 != nil; t += 2 {
			k2(nb, w, &a.qs[t*m.Cols], m.Cols, a.scales(t), a.scaleStride(), a.sums(m.Type, t), 4*sumsPerRow(m.Type, a.Cols), &out[t*ldo+g*packRows-c0], 4*ldo)
		}
		for ; t < T; t++ {
			k(nb, w, &a.qs[t*m.Cols], a.scales(t), a.sums(m.Type, t), &out[t*ldo+g*packRows-c0])
		}
	}
	g := g0
	if ak, ok := amxKernels[m.Type]; ok && hasAMXInt8 && T >= amxTokens && g1-g0 >= 2 {
		T16 := T / amxTokens * amxTokens
		s := amxPool.Get().(*amxScratch)
		tail, t0 := amxTailed(T), T16
		if tail {
			t0 = T
		}
		most := amxPairs(m.Cols / QKK)
		for g+2 <= g1 {
			np := min(most, (g1-g)/2)
			amxPairsRun(&ak, out, ldo, c0, a, T16, tail, m, pk, g, np, s)
			for ; np > 0; np-- {
				rest(g, t0)
				rest(g+1, t0)
				g += 2
			}
		}
		amxPool.Put(s)
	}
	for ; g < g1; g++ {
		rest(g, 0)
	}
}

// MatMulShared computes outs[i][T, ms[i].Rows] = x[T, Cols]·ms[i]ᵀ for
// matrices that read the same input (a layer's q, k and v; gate and up).
// Where all of them run the packed kernels, x is quantized once and one
// parallel region covers all their rows (a decode step's matrices are
// small, so each region's start and join is a real share of the time);
// otherwise it is MatMul on each. Results equal separate MatMul calls.
func MatMulShared(outs [][]float32, x []float32, T int, ms []*Matrix) {
	if ms[0].F32Activations {
		matMulSharedF32(outs, x, T, ms)
		return
	}
	pks := make([][]byte, len(ms))
	rows := 0
	var work int64
	for i, m := range ms {
		pks[i] = m.packedData()
		if pks[i] == nil || m.F32Activations || T >= packedMaxT || m.Cols != ms[0].Cols || kquant(m.Type) != kquant(ms[0].Type) ||
			len(x) < T*m.Cols || len(outs[i]) < T*m.Rows {
			for j, m := range ms {
				MatMul(outs[j], x, T, m)
			}
			return
		}
		rows += m.Rows
		work += int64(T) * int64(len(m.Data))
	}
	a := actPool.Get().(*Act)
	defer actPool.Put(a)
	a.Quantize(ms[0].Type, x, T, ms[0].Cols)
	for _, m := range ms {
		a.prepare(m.Type)
	}
	jointGroups(ms, rows, work, func(i, g0, g1 int) { packedGroups(outs[i], ms[i].Rows, 0, a, T, ms[i], pks[i], g0, g1) })
}

// jointGroups is MatMulShared's one parallel region: the rows of all of ms
// numbered one after the other and split across the workers, each piece
// handed to run as groups [g0, g1) of matrix i.
func jointGroups(ms []*Matrix, rows int, work int64, run func(i, g0, g1 int)) {
	parallelRows(rows, work, func(r0, r1 int) {
		off := 0 // first row of ms[i] in the joint numbering
		for i, m := range ms {
			lo, hi := max(r0, off), min(r1, off+m.Rows)
			if lo < hi {
				run(i, (lo-off)/packRows, (hi-off)/packRows)
			}
			off += m.Rows
		}
	})
}

// matMulDequant is MatMul through float32: tiles of weight rows widened
// and multiplied by blas (x itself is not quantized).
func matMulDequant(out, x []float32, T int, m *Matrix) {
	const tile = 64
	parallelRows(m.Rows, int64(T)*int64(len(m.Data)), func(r0, r1 int) {
		// The tile buffer is pooled: a prefill runs this for every chunk
		// of every matrix, and fresh buffers grew the heap by a third of
		// the demo model's peak RSS.
		buf := tilePool.Get().(*[]float32)
		defer tilePool.Put(buf)
		*buf = grow(*buf, tile*m.Cols)
		w := *buf
		pk := m.packedCopy()
		for rt := r0; rt < r1; rt += tile {
			re := min(rt+tile, r1)
			if pk == nil || !m.unpackRows(w, pk, rt, re) {
				m.DequantizeRows(w, rt, re)
			}
			blas.SgemmGo(false, true, T, re-rt, m.Cols, 1, x, m.Cols, w, m.Cols, 0, out[rt:], m.Rows)
		}
	})
}

var tilePool = sync.Pool{New: func() any { return new([]float32) }}

// DequantizeRows widens rows [r0, r1) into dst[(r1-r0)·Cols].
func (m *Matrix) DequantizeRows(dst []float32, r0, r1 int) {
	dst, src := dst[:(r1-r0)*m.Cols], m.Data[r0*m.rowBytes:r1*m.rowBytes]
	if dequantFast(m.Type, dst, src) {
		return
	}
	DequantizeRow(m.Type, dst, src)
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

// parallelRows splits [0, n) rows across GOMAXPROCS workers (pool.go) in
// rowTile-aligned chunks when the bytes to stream justify the start-up.
// There are chunksPerWorker chunks per worker, taken from a shared counter
// (as ggml's matmul does): a worker that starts late, or shares its core
// with another process, takes fewer chunks instead of holding up the join.
func parallelRows(n int, work int64, fn func(r0, r1 int)) {
	workers := maxWorkers()
	if work < 1<<15 || workers <= 1 || n <= rowTile {
		fn(0, n)
		return
	}
	chunks := min(chunksPerWorker*workers, (n+rowTile-1)/rowTile)
	per := ((n+chunks-1)/chunks + rowTile - 1) / rowTile * rowTile
	var next atomic.Int64
	take := func() {
		for {
			lo := int(next.Add(1)-1) * per
			if lo >= n {
				return
			}
			fn(lo, min(lo+per, n))
		}
	}
	fns := make([]func(), min(workers, (n+per-1)/per))
	for i := range fns {
		fns[i] = take
	}
	runParallel(fns)
}

// chunksPerWorker is how many chunks parallelRows cuts per worker: enough
// to even out a late start, few enough that each chunk streams a long run
// of rows.
const chunksPerWorker = 4
