//go:build !purego

package quant

// The float32-activation packed kernels (packedf32_amd64.s, written by
// packedf32_gen.go): AVX2 with FMA and F16C for eight rows, AVX-512 (BW,
// VL) for sixteen.

//go:noescape
func gemvQ4_1x8F32(nb int, w *byte, x *float32, sx *float32, out *float32)

//go:noescape
func gemvQ8_0x8F32(nb int, w *byte, x *float32, sx *float32, out *float32)

//go:noescape
func gemvQ4_1x8F32x2(nb int, w *byte, x *float32, ldx int, sx *float32, ldsx int, out *float32, ldo int)

//go:noescape
func gemvQ8_0x8F32x2(nb int, w *byte, x *float32, ldx int, sx *float32, ldsx int, out *float32, ldo int)

//go:noescape
func gemvQ4_1x8F32x4(nb int, w *byte, x *float32, ldx int, sx *float32, ldsx int, out *float32, ldo int)

//go:noescape
func gemvQ8_0x8F32x4(nb int, w *byte, x *float32, ldx int, sx *float32, ldsx int, out *float32, ldo int)

//go:noescape
func gemvQ4_1x16F32(nb int, w *byte, gstride int, x *float32, sx *float32, out *float32)

//go:noescape
func gemvQ8_0x16F32(nb int, w *byte, gstride int, x *float32, sx *float32, out *float32)

//go:noescape
func gemvQ4_1x16F32x2(nb int, w *byte, gstride int, x *float32, ldx int, sx *float32, ldsx int, out *float32, ldo int)

//go:noescape
func gemvQ8_0x16F32x2(nb int, w *byte, gstride int, x *float32, ldx int, sx *float32, ldsx int, out *float32, ldo int)

//go:noescape
func gemvQ4_1x16F32x4(nb int, w *byte, gstride int, x *float32, ldx int, sx *float32, ldsx int, out *float32, ldo int)

//go:noescape
func gemvQ8_0x16F32x4(nb int, w *byte, gstride int, x *float32, ldx int, sx *float32, ldsx int, out *float32, ldo int)

//go:noescape
func gemvQ4_1x16F32x8(nb int, w *byte, gstride int, x *float32, ldx int, sx *float32, ldsx int, out *float32, ldo int)

//go:noescape
func gemvQ8_0x16F32x8(nb int, w *byte, gstride int, x *float32, ldx int, sx *float32, ldsx int, out *float32, ldo int)

// fastF32Kernels are the float32-activation kernels by block type: none
// without AVX2, the sixteen-row ones only with AVX-512.
func fastF32Kernels(avx2, avx512 bool) map[Type]f32Kernels {
	if !avx2 {
		return nil
	}
	q41 := f32Kernels{one: gemvQ4_1x8F32, multi: []tokensKernel[gemvF32x2Func]{{4, gemvQ4_1x8F32x4}, {2, gemvQ4_1x8F32x2}}}
	q80 := f32Kernels{one: gemvQ8_0x8F32, multi: []tokensKernel[gemvF32x2Func]{{4, gemvQ8_0x8F32x4}, {2, gemvQ8_0x8F32x2}}}
	if avx512 {
		q41.one16 = gemvQ4_1x16F32
		q41.multi16 = []tokensKernel[gemvF32x16x4Func]{{8, gemvQ4_1x16F32x8}, {4, gemvQ4_1x16F32x4}, {2, gemvQ4_1x16F32x2}}
		q80.one16 = gemvQ8_0x16F32
		q80.multi16 = []tokensKernel[gemvF32x16x4Func]{{8, gemvQ8_0x16F32x8}, {4, gemvQ8_0x16F32x4}, {2, gemvQ8_0x16F32x2}}
	}
	return map[Type]f32Kernels{Q4_1: q41, Q8_0: q80}
}
