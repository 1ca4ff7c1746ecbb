//go:build !purego

package quant

//go:noescape
func gemvQ4_1x8F32(nb int, w *byte, x *float32, sx *float32, out *float32)

//go:noescape
func gemvQ8_0x8F32(nb int, w *byte, x *float32, sx *float32, out *float32)

// fastGemvF32 are the float32-activation packed kernels (AVX2, FMA, F16C).
func fastGemvF32(avx2 bool) map[Type]gemvF32Func {
	if !avx2 {
		return map[Type]gemvF32Func{}
	}
	return map[Type]gemvF32Func{Q4_1: gemvQ4_1x8F32, Q8_0: gemvQ8_0x8F32}
}

//go:noescape
func gemvQ4_1x8F32x2(nb int, w *byte, x *float32, ldx int, sx *float32, ldsx int, out *float32, ldo int)

//go:noescape
func gemvQ8_0x8F32x2(nb int, w *byte, x *float32, ldx int, sx *float32, ldsx int, out *float32, ldo int)

// fastGemvF32x2 are the two-token forms of fastGemvF32's kernels.
func fastGemvF32x2(avx2 bool) map[Type]gemvF32x2Func {
	if !avx2 {
		return map[Type]gemvF32x2Func{}
	}
	return map[Type]gemvF32x2Func{Q4_1: gemvQ4_1x8F32x2, Q8_0: gemvQ8_0x8F32x2}
}

//go:noescape
func gemvQ4_1x16F32(nb int, w *byte, gstride int, x *float32, sx *float32, out *float32)

//go:noescape
func gemvQ8_0x16F32(nb int, w *byte, gstride int, x *float32, sx *float32, out *float32)

//go:noescape
func gemvQ4_1x8F32x4(nb int, w *byte, x *float32, ldx int, sx *float32, ldsx int, out *float32, ldo int)

//go:noescape
func gemvQ8_0x8F32x4(nb int, w *byte, x *float32, ldx int, sx *float32, ldsx int, out *float32, ldo int)

// fastGemvF32x4 are the four-token forms of fastGemvF32's kernels.
func fastGemvF32x4(avx2 bool) map[Type]gemvF32x2Func {
	if !avx2 {
		return map[Type]gemvF32x2Func{}
	}
	return map[Type]gemvF32x2Func{Q4_1: gemvQ4_1x8F32x4, Q8_0: gemvQ8_0x8F32x4}
}

// fastGemvF32x16 are the AVX-512 two-group forms of fastGemvF32's kernels.
func fastGemvF32x16(avx512 bool) map[Type]gemvF32x16Func {
	if !avx512 {
		return map[Type]gemvF32x16Func{}
	}
	return map[Type]gemvF32x16Func{Q4_1: gemvQ4_1x16F32, Q8_0: gemvQ8_0x16F32}
}

//go:noescape
func gemvQ4_1x16F32x4(nb int, w *byte, gstride int, x *float32, ldx int, sx *float32, ldsx int, out *float32, ldo int)

//go:noescape
func gemvQ8_0x16F32x4(nb int, w *byte, gstride int, x *float32, ldx int, sx *float32, ldsx int, out *float32, ldo int)

// fastGemvF32x16x4 are the AVX-512 four-token forms of fastGemvF32x16's
// kernels.
func fastGemvF32x16x4(avx512 bool) map[Type]gemvF32x16x4Func {
	if !avx512 {
		return map[Type]gemvF32x16x4Func{}
	}
	return map[Type]gemvF32x16x4Func{Q4_1: gemvQ4_1x16F32x4, Q8_0: gemvQ8_0x16F32x4}
}

//go:noescape
func gemvQ4_1x16F32x2(nb int, w *byte, gstride int, x *float32, ldx int, sx *float32, ldsx int, out *float32, ldo int)

//go:noescape
func gemvQ8_0x16F32x2(nb int, w *byte, gstride int, x *float32, ldx int, sx *float32, ldsx int, out *float32, ldo int)

// fastGemvF32x16x2 are the AVX-512 two-token forms of fastGemvF32x16's
// kernels.
func fastGemvF32x16x2(avx512 bool) map[Type]gemvF32x16x4Func {
	if !avx512 {
		return map[Type]gemvF32x16x4Func{}
	}
	return map[Type]gemvF32x16x4Func{Q4_1: gemvQ4_1x16F32x2, Q8_0: gemvQ8_0x16F32x2}
}

//go:noescape
func gemvQ4_1x16F32x8(nb int, w *byte, gstride int, x *float32, ldx int, sx *float32, ldsx int, out *float32, ldo int)

//go:noescape
func gemvQ8_0x16F32x8(nb int, w *byte, gstride int, x *float32, ldx int, sx *float32, ldsx int, out *float32, ldo int)

// fastGemvF32x16x8 are the AVX-512 eight-token forms of fastGemvF32x16's
// kernels.
func fastGemvF32x16x8(avx512 bool) map[Type]gemvF32x16x4Func {
	if !avx512 {
		return map[Type]gemvF32x16x4Func{}
	}
	return map[Type]gemvF32x16x4Func{Q4_1: gemvQ4_1x16F32x8, Q8_0: gemvQ8_0x16F32x8}
}
