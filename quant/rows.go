package quant

import "fmt"

// MatMulRows computes rows [r0, r1) of MatMul(x, m): out[t·ldo + r − r0] =
// x[t]·m[r] for T tokens. The trainer's LM head runs the vocabulary in
// pieces this way. Where m has a packed copy (made once, as serving makes
// it) the pieces run on it, so no piece packs a view of its rows again each
// step; where r0 and r1 fall on its eight-row groups the kernels write out
// directly. Every value equals MatMul's for row r: the kernels compute each
// row alone.
func MatMulRows(out []float32, ldo int, x []float32, T int, m *Matrix, r0, r1 int) error {
	if r0 < 0 || r1 > m.Rows || r0 >= r1 || ldo < r1-r0 {
		return fmt.Errorf("quant: rows [%d, %d) of a [%d, %d] %v matrix into a row stride of %d", r0, r1, m.Rows, m.Cols, m.Type, ldo)
	}
	if len(x) < T*m.Cols || len(out) < (T-1)*ldo+r1-r0 {
		return fmt.Errorf("quant: rows [%d, %d) of [%d, %d]·[%d, %d]ᵀ with len(x)=%d len(out)=%d", r0, r1, T, m.Cols, m.Rows, m.Cols, len(x), len(out))
	}
	var pk []byte
	switch {
	case m.F32Activations:
		pk = m.f32PackedData()
	case T < dequantMinT && T < packedMaxT:
		pk = m.packedData()
	}
	if pk != nil {
		// Off the groups' boundaries, the whole groups that hold the rows
		// go to scratch (a view of the rows would run other kernels, not
		// bitwise these for every type).
		g0, g1 := r0/packRows, (r1+packRows-1)/packRows
		dst, ld, c0 := out, ldo, r0
		if r0%packRows != 0 || r1%packRows != 0 {
			ld, c0 = (g1-g0)*packRows, g0*packRows
			dst = make([]float32, T*ld)
		}
		var run func(lo, hi int)
		if m.F32Activations {
			sx := blockSums(m.Type, x[:T*m.Cols])
			run = func(lo, hi int) {
				packedGroupsF32(dst, ld, c0, x, sx, T, m, pk, g0+lo/packRows, g0+hi/packRows)
			}
		} else {
			a := actPool.Get().(*Act)
			defer actPool.Put(a)
			a.Quantize(m.Type, x, T, m.Cols)
			a.prepare(m.Type)
			run = func(lo, hi int) { packedGroups(dst, ld, c0, a, T, m, pk, g0+lo/packRows, g0+hi/packRows) }
		}
		parallelRows((g1-g0)*packRows, int64(T)*int64(r1-r0)*int64(m.rowBytes), run)
		if c0 != r0 || ld != ldo {
			for t := range T {
				copy(out[t*ldo:t*ldo+r1-r0], dst[t*ld+r0-c0:t*ld+r1-c0])
			}
		}
		return nil
	}
	view, err := NewMatrix(m.Type, r1-r0, m.Cols, m.Data[r0*m.rowBytes:r1*m.rowBytes])
	if err != nil {
		return err
	}
	view.F32Activations = m.F32Activations
	tmp := make([]float32, T*(r1-r0))
	MatMul(tmp, x, T, view)
	for t := range T {
		copy(out[t*ldo:t*ldo+r1-r0], tmp[t*(r1-r0):(t+1)*(r1-r0)])
	}
	return nil
}
