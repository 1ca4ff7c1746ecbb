package quant

import "math"

// actRow is one activation row quantized for the dot products: int8
// values, and per block either (d, d·Σq) pairs of 32 values (Q8 form) or
// one d per 256 with the sums of each 16 (Q8_K form).
type actRow struct {
	qs    []int8
	ds    []float32
	bsums []int16
}

// kquant reports whether t's activations are quantized to Q8_K.
func kquant(t Type) bool { return t == Q4_K || t == Q5_K || t == Q6_K }

// Act is a [T, Cols] activation matrix quantized for dot products with
// weights of one type; its buffers are reused across calls.
type Act struct {
	T, Cols int
	K       bool // Q8_K form
	qs      []int8
	ds      []float32
	bsums   []int16
	isums   []int32 // exact Σq per block of 32 (Q8 form)
	sums4   []int32 // 128·Σq per four values (fillSums4), for the packed Q8_0 kernel
	sums32  []int32 // Σq per 32 values (Q8_K form), for the packed Q4_K/Q5_K kernels' minimums
	sums32h []int16 // Σq per 32 values as int16 (|Σq| ≤ 32·127), for the AMX kernels (fillTiles)
	sums16  []int32 // 32·Σq per 16 values (Q8_K form), for the packed Q6_K kernel's offset
	tail    amxTail // the last tokens padded to a tile, for the AMX kernels
	filled  uint8   // which of sums4, sums32, sums16 and sums32h with tail hold the current values
}

// Quantize fills a from x[T, cols] for products with weights of type t.
func (a *Act) Quantize(t Type, x []float32, T, cols int) {
	a.T, a.Cols, a.K, a.filled = T, cols, kquant(t), 0
	a.qs = grow(a.qs, T*cols)
	// Tokens are independent: a prefill's or a training forward's rows
	// are quantized on every core (one goroutine left the other core idle
	// before each product).
	work := int64(T) * int64(cols)
	if a.K {
		a.ds = grow(a.ds, T*cols/QKK)
		a.bsums = grow(a.bsums, T*cols/16)
		parallelRows(T, work, func(t0, t1 int) {
			b0, b1 := t0*cols/QKK, t1*cols/QKK
			quantizeQ8KBlocks(a.qs[b0*QKK:b1*QKK], a.ds[b0:b1], a.bsums[16*b0:16*b1], x[b0*QKK:b1*QKK])
		})
		return
	}
	a.ds = grow(a.ds, 2*T*cols/QK)
	a.isums = grow(a.isums, T*cols/QK)
	parallelRows(T, work, func(t0, t1 int) {
		quantizeQ8(a.qs[t0*cols:t1*cols], a.ds[2*t0*cols/QK:2*t1*cols/QK], a.isums[t0*cols/QK:t1*cols/QK], x[t0*cols:t1*cols])
	})
}

// fillSums4 computes sums4 from qs (Q8 form).
func (a *Act) fillSums4() {
	a.sums4 = grow(a.sums4, a.T*a.Cols/4)
	for i := range a.sums4 {
		q := a.qs[4*i : 4*i+4]
		a.sums4[i] = 128 * (int32(q[0]) + int32(q[1]) + int32(q[2]) + int32(q[3]))
	}
}

// Bits of Act.filled.
const (
	filledSums4 = 1 << iota
	filledSums32
	filledSums16
	filledTiles
)

// prepare fills the activation sums the packed kernel of weight type t
// reads (once per quantization, however many matrices share it).
func (a *Act) prepare(t Type) {
	switch {
	case t == Q8_0 && a.filled&filledSums4 == 0:
		a.fillSums4()
		a.filled |= filledSums4
	case (t == Q4_K || t == Q5_K) && a.filled&filledSums32 == 0:
		a.sums32 = grow(a.sums32, a.T*a.Cols/32)
		for i := range a.sums32 {
			a.sums32[i] = int32(a.bsums[2*i]) + int32(a.bsums[2*i+1])
		}
		a.filled |= filledSums32
	case t == Q6_K && a.filled&filledSums16 == 0:
		a.sums16 = grow(a.sums16, a.T*a.Cols/16)
		for i := range a.sums16 {
			a.sums16[i] = 32 * int32(a.bsums[i])
		}
		a.filled |= filledSums16
	}
	if _, ok := amxKernels[t]; ok && hasAMXInt8 && a.T >= amxTokens && a.filled&filledTiles == 0 {
		a.fillTiles()
		a.filled |= filledTiles
	}
}

// sums is the activation sums of token t that the packed kernel of weight
// type t reads (nil for a type that reads none); prepare comes first.
func (a *Act) sums(ty Type, t int) *int32 {
	if n := sumsPerRow(ty, a.Cols); n > 0 {
		return &a.sumsOf(ty)[t*n]
	}
	return nil
}

// sumsPerRow is how many of Act.sums' values one activation row of cols
// has for weights of type ty (0 where the kernels read none).
func sumsPerRow(ty Type, cols int) int {
	switch ty {
	case Q4_0, Q5_0, Q5_1:
		return cols / QK
	case Q8_0:
		return cols / 4
	case Q4_K, Q5_K:
		return cols / 32
	case Q6_K:
		return cols / 16
	}
	return 0
}

// sumsOf is the slice Act.sums reads for ty.
func (a *Act) sumsOf(ty Type) []int32 {
	switch ty {
	case Q4_0, Q5_0, Q5_1:
		return a.isums
	case Q8_0:
		return a.sums4
	case Q4_K, Q5_K:
		return a.sums32
	}
	return a.sums16
}

// scales is the first activation scale of token t: (d, d·Σq) pairs per 32
// values in the Q8 form, one d per 256 in the Q8_K form.
func (a *Act) scales(t int) *float32 {
	if a.K {
		return &a.ds[t*a.Cols/QKK]
	}
	return &a.ds[t*2*a.Cols/QK]
}

// scaleStride is the distance in bytes between two tokens' scales.
func (a *Act) scaleStride() int {
	if a.K {
		return 4 * (a.Cols / QKK)
	}
	return 4 * 2 * a.Cols / QK
}

func (a *Act) row(t int) actRow {
	r := actRow{qs: a.qs[t*a.Cols : (t+1)*a.Cols]}
	if a.K {
		n := a.Cols / QKK
		r.ds = a.ds[t*n : (t+1)*n]
		r.bsums = a.bsums[t*a.Cols/16 : (t+1)*a.Cols/16]
	} else {
		n := 2 * a.Cols / QK
		r.ds = a.ds[t*n : (t+1)*n]
	}
	return r
}

func grow[E any](s []E, n int) []E {
	if cap(s) < n {
		return make([]E, n)
	}
	return s[:n]
}

// quantizeQ8 is llama.cpp's x86 quantize_row_q8_1 (and q8_0, which is the
// same without the sum): per 32 values, d = amax/127 kept as float16,
// q = round-half-even(x·127/amax), s = d·Σq kept as float16.
// isums receives each block's Σq exactly.
func quantizeQ8(qs []int8, ds []float32, isums []int32, x []float32) {
	if quantizeQ8Fast(qs, ds, isums, x) {
		return
	}
	quantizeQ8Ref(qs, ds, isums, x)
}

func quantizeQ8Ref(qs []int8, ds []float32, isums []int32, x []float32) {
	for b := 0; b < len(x)/QK; b++ {
		xb := x[b*QK : (b+1)*QK]
		var amax float32
		for _, v := range xb {
			amax = max(amax, float32(math.Abs(float64(v))))
		}
		d := amax / 127
		var id float32
		if amax != 0 {
			id = 127 / amax
		}
		sum := 0
		for j, v := range xb {
			q := int(math.RoundToEven(float64(v * id)))
			qs[b*QK+j] = int8(q)
			sum += q
		}
		isums[b] = int32(sum)
		ds[2*b] = F16ToF32(F32ToF16(d))
		ds[2*b+1] = F16ToF32(F32ToF16(d * float32(sum)))
	}
}

// quantizeQ8KBlocks quantizes len(ds) super-blocks of x, on the assembly
// where the CPU has it (the same results).
func quantizeQ8KBlocks(qs []int8, ds []float32, bsums []int16, x []float32) {
	if quantizeQ8KFast(qs, ds, bsums, x) {
		return
	}
	for b := range ds {
		quantizeQ8K(qs[b*QKK:(b+1)*QKK], &ds[b], bsums[b*16:(b+1)*16], x[b*QKK:(b+1)*QKK])
	}
}

// quantizeQ8K is quantize_row_q8_K_ref: the signed value of largest
// magnitude maps to -127, d = 1/scale in float32, plus the sums of 16.
func quantizeQ8K(qs []int8, d *float32, bsums []int16, x []float32) {
	var amax, mx float32
	for _, v := range x {
		if a := float32(math.Abs(float64(v))); a > amax {
			amax, mx = a, v
		}
	}
	if amax == 0 {
		*d = 0
		clear(qs)
		clear(bsums)
		return
	}
	iscale := -127 / mx
	for j, v := range x {
		qs[j] = int8(min(127, int(math.RoundToEven(float64(iscale*v)))))
	}
	for j := range bsums {
		s := 0
		for _, q := range qs[16*j : 16*j+16] {
			s += int(q)
		}
		bsums[j] = int16(s)
	}
	*d = 1 / iscale
}
