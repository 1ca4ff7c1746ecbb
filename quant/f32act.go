package quant

// Float32 activations over quantized weights. llama.cpp (and MatMul by
// default) rounds each activation row to 8 bits per block before its dot
// products; on a small model that rounding alone changes greedy answers
// (the demo model's "capital of France" becomes "L'Étoile…" instead of the
// float32 model's "Paris"). A Matrix with F32Activations set keeps the
// activations in float32: its decode kernels widen each block's integers
// to float32 in registers and multiply with FMAs (packedf32_amd64.s, on
// the same packed copy as the int8 kernels, at every batch), and
// everything else (types without such a kernel, matrices with no packed
// copy, the pure-Go build) widens tiles of rows and runs blas's float32
// kernels. Either way only the weights are rounded, as in the dequantized
// float32 model, whose logits these equal within float32 rounding.

//go:generate go run packedf32_gen.go

// gemvF32Func computes out[0:8] for one packed group (nb blocks at w)
// against one float32 activation row x, with sx its sums per block of 32
// (read by the types with a minimum, Q4_1).
type gemvF32Func func(nb int, w *byte, x *float32, sx *float32, out *float32)

// gemvF32x16Func is gemvF32Func for two adjacent packed groups (16 rows,
// the second gstride bytes after the first; out[0:16]), bitwise the same
// per row.
type gemvF32x16Func func(nb int, w *byte, gstride int, x *float32, sx *float32, out *float32)

// gemvF32x2Func is gemvF32Func for several tokens at once (their rows ldx
// bytes apart in x, ldsx in sx; outputs ldo bytes apart): each block is
// widened once for all, and each token's outputs are bitwise those of
// gemvF32Func on it alone.
type gemvF32x2Func func(nb int, w *byte, x *float32, ldx int, sx *float32, ldsx int, out *float32, ldo int)

// gemvF32x16x4Func is gemvF32x16Func for several tokens at once (strides
// as gemvF32x2Func's), each token's outputs bitwise those of the one-token
// kernels on it alone.
type gemvF32x16x4Func func(nb int, w *byte, gstride int, x *float32, ldx int, sx *float32, ldsx int, out *float32, ldo int)

// tokensKernel is a multi-token kernel and the tokens it takes per call.
type tokensKernel[F any] struct {
	n int
	k F
}

// f32Kernels are one block type's float32-activation packed kernels on
// this CPU: eight rows (one packed group; AVX2) for one token and for
// several (multi, most tokens first), and sixteen rows (two groups;
// AVX-512, nil without it) likewise.
type f32Kernels struct {
	one     gemvF32Func
	multi   []tokensKernel[gemvF32x2Func]
	one16   gemvF32x16Func
	multi16 []tokensKernel[gemvF32x16x4Func]
}

// f32KernelsFor are the float32-activation kernels this CPU runs, by block
// type (none for a type without them).
var f32KernelsFor = fastF32Kernels(hasAVX2, hasAVX512)

// The float32-activation products are batch-invariant: every kernel sums
// a row's products in one order (packedf32_gen.go: per block two partial
// sums, one over byte positions 0 and 2, one over 1 and 3, added, then
// d·sum and m·Σx fused into the row's sum), so a token's outputs are the
// same bits alone, beside other requests in a decode step, after a
// prefix-cache hit and in the trainer's batch. That is why larger batches
// run the packed kernels too, not widened tiles through blas (whose order
// of sums differs). Two partial sums per token (not four, as before the
// seventieth session) leave registers for a block widened once to serve
// four tokens with AVX2 and eight with AVX-512 (BENCHMARKS.md, "Two
// partial sums per block").

// matMulF32 is MatMul for a matrix with F32Activations.
func matMulF32(out, x []float32, T int, m *Matrix) {
	pk := m.f32PackedData()
	if pk == nil {
		matMulDequant(out, x, T, m)
		return
	}
	sx := blockSums(m.Type, x[:T*m.Cols])
	parallelRows(m.Rows, int64(T)*int64(len(m.Data)), func(r0, r1 int) {
		packedGroupsF32(out, m.Rows, 0, x, sx, T, m, pk, r0/packRows, r1/packRows)
	})
}

// f32PackedData is m's packed copy when a float32-activation packed kernel
// runs m, else nil.
func (m *Matrix) f32PackedData() []byte {
	if !HasF32Kernel(m.Type) {
		return nil
	}
	return m.packedData()
}

// blockSums returns Σx per block of 32 of x when t's kernel reads them
// (Q4_1's minimum), else nil.
func blockSums(t Type, x []float32) []float32 {
	if t != Q4_1 {
		return nil
	}
	sx := make([]float32, len(x)/QK)
	for b := range sx {
		var s float32
		for _, v := range x[b*QK : (b+1)*QK] {
			s += v
		}
		sx[b] = s
	}
	return sx
}

// packedGroupsF32 runs groups [g0, g1) of m's packed copy pk for T tokens
// of float32 activations x (sx: their block sums, or nil), row r of token
// t to out[t·ldo + r - c0].
func packedGroupsF32(out []float32, ldo, c0 int, x, sx []float32, T int, m *Matrix, pk []byte, g0, g1 int) {
	ks := f32KernelsFor[m.Type]
	nb := m.Cols / m.Type.BlockSize()
	gsize := nb * packedBlockBytes(m.Type)
	sums := func(t int) *float32 {
		if sx == nil {
			return nil
		}
		return &sx[t*nb]
	}
	o := func(t, g int) *float32 { return &out[t*ldo+g*packRows-c0] }
	g := g0
	if ks.one16 != nil {
		// Two groups per call (AVX-512), the most tokens a kernel takes
		// at a time, then fewer.
		for ; g+1 < g1; g += 2 {
			w := &pk[g*gsize]
			t := 0
			for _, mk := range ks.multi16 {
				for ; t+mk.n <= T; t += mk.n {
					mk.k(nb, w, gsize, &x[t*m.Cols], 4*m.Cols, sums(t), 4*nb, o(t, g), 4*ldo)
				}
			}
			for ; t < T; t++ {
				ks.one16(nb, w, gsize, &x[t*m.Cols], sums(t), o(t, g))
			}
		}
	}
	for ; g < g1; g++ {
		w := &pk[g*gsize]
		t := 0
		for _, mk := range ks.multi {
			for ; t+mk.n <= T; t += mk.n {
				mk.k(nb, w, &x[t*m.Cols], 4*m.Cols, sums(t), 4*nb, o(t, g), 4*ldo)
			}
		}
		for ; t < T; t++ {
			ks.one(nb, w, &x[t*m.Cols], sums(t), o(t, g))
		}
	}
}

// matMulSharedF32 is MatMulShared for matrices with F32Activations: one
// parallel region over all their rows where all run packed kernels.
func matMulSharedF32(outs [][]float32, x []float32, T int, ms []*Matrix) {
	pks := make([][]byte, len(ms))
	rows := 0
	var work int64
	for i, m := range ms {
		pks[i] = m.f32PackedData()
		if pks[i] == nil || m.Cols != ms[0].Cols || len(x) < T*m.Cols || len(outs[i]) < T*m.Rows {
			for j, m := range ms {
				MatMul(outs[j], x, T, m)
			}
			return
		}
		rows += m.Rows
		work += int64(T) * int64(len(m.Data))
	}
	var sx []float32
	for _, m := range ms {
		if sx = blockSums(m.Type, x[:T*m.Cols]); sx != nil {
			break
		}
	}
	jointGroups(ms, rows, work, func(i, g0, g1 int) { packedGroupsF32(outs[i], ms[i].Rows, 0, x, sx, T, ms[i], pks[i], g0, g1) })
}

// HasF32Kernel reports whether this CPU runs float32-activation products
// with t's blocks on packed kernels (at every batch, in one order of sums;
// else they widen tiles of rows to float32 for every product, slower at
// decode than a float32 copy).
func HasF32Kernel(t Type) bool { return f32KernelsFor[t].one != nil }

// unpackRows widens rows [r0, r1) (whole groups) of m from its packed copy
// pk into dst, bitwise as DequantizeRows does from the blocks, and reports
// whether it could (Q4_1 and Q8_0). Once packed, a file-mapped matrix's
// blocks have left the resident set; widening from the copy keeps them out.
func (m *Matrix) unpackRows(dst []float32, pk []byte, r0, r1 int) bool {
	if (m.Type != Q4_1 && m.Type != Q8_0) || r0%packRows != 0 || r1%packRows != 0 {
		return false
	}
	nb := m.Cols / QK
	size := packedBlockBytes(m.Type)
	for r := r0; r < r1; r++ {
		g, lane := r/packRows, r%packRows
		row := dst[(r-r0)*m.Cols : (r-r0+1)*m.Cols]
		for b := 0; b < nb; b++ {
			blk := pk[(g*nb+b)*size : (g*nb+b+1)*size]
			out := row[b*QK : (b+1)*QK]
			switch m.Type {
			case Q4_1:
				d := F16ToF32(uint16(blk[128+2*lane]) | uint16(blk[129+2*lane])<<8)
				mn := F16ToF32(uint16(blk[144+2*lane]) | uint16(blk[145+2*lane])<<8)
				for k := 0; k < 4; k++ {
					for i := 0; i < 4; i++ {
						q := blk[32*k+4*lane+i]
						out[4*k+i] = float32(d*float32(q&0x0f)) + mn
						out[16+4*k+i] = float32(d*float32(q>>4)) + mn
					}
				}
			case Q8_0:
				d := F16ToF32(uint16(blk[256+2*lane]) | uint16(blk[257+2*lane])<<8)
				for k := 0; k < 8; k++ {
					for i := 0; i < 4; i++ {
						out[4*k+i] = float32(int8(blk[32*k+4*lane+i]^0x80)) * d
					}
				}
			}
		}
	}
	return true
}
