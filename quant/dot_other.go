//go:build !amd64 || purego

package quant

const hasAVX2, hasVNNI, hasAVXVNNI = false, false, false

func fastDots(vnni, avx2 bool) map[Type]func(w []byte, a actRow) float32 {
	return map[Type]func(w []byte, a actRow) float32{}
}

func fastDots4(vnni, avx2 bool) map[Type]dot4Func { return map[Type]dot4Func{} }

func quantizeQ8Fast(qs []int8, ds []float32, isums []int32, x []float32) bool { return false }

func quantizeQ8KFast(qs []int8, ds []float32, bsums []int16, x []float32) bool { return false }

func fastGemv8(vnni, avxvnni, avx2 bool) map[Type]gemv8Func { return map[Type]gemv8Func{} }

const hasAVX512 = false

func fastGemv8x4(vnni bool) map[Type]gemv8x4Func { return map[Type]gemv8x4Func{} }

func fastGemv8x2(vnni, avxvnni, avx2 bool) map[Type]gemv8x4Func { return map[Type]gemv8x4Func{} }

func dequantFast(t Type, dst []float32, src []byte) bool { return false }

func fastF32Kernels(avx2, avx512 bool) map[Type]f32Kernels { return nil }

var hasAMXInt8 = false

func prepQ4KAMX(nb int, w *byte, gstride int, dst *byte) { panic("quant: no AMX kernel") }

func gemmQ4KAMX(tiles int, prep *byte, qs *int8, ldq int, ds *float32, ldd int, sums *int16, lds int, out *float32, ldo int, ctmp *byte, cfg *byte) {
	panic("quant: no AMX kernel")
}

func prepQ6KAMX(nb int, w *byte, gstride int, dst *byte) { panic("quant: no AMX kernel") }

func gemmQ6KAMX(tiles int, prep *byte, qs *int8, ldq int, ds *float32, ldd int, sums *int16, lds int, out *float32, ldo int, ctmp *byte, cfg *byte) {
	panic("quant: no AMX kernel")
}
