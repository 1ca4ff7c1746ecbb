//go:build !amd64 || purego

package quant

const hasAVX2, hasVNNI = false, false

func fastDots(vnni, avx2 bool) map[Type]func(w []byte, a actRow) float32 {
	return map[Type]func(w []byte, a actRow) float32{}
}

func fastDots4(vnni, avx2 bool) map[Type]dot4Func { return map[Type]dot4Func{} }

func quantizeQ8Fast(qs []int8, ds []float32, isums []int32, x []float32) bool { return false }

func fastGemv8(vnni, avx2 bool) map[Type]gemv8Func { return map[Type]gemv8Func{} }

func fastGemvF32(avx2 bool) map[Type]gemvF32Func { return map[Type]gemvF32Func{} }

func fastGemvF32x2(avx2 bool) map[Type]gemvF32x2Func { return map[Type]gemvF32x2Func{} }

const hasAVX512 = false

func fastGemvF32x16(avx512 bool) map[Type]gemvF32x16Func { return map[Type]gemvF32x16Func{} }

func fastGemvF32x16x4(avx512 bool) map[Type]gemvF32x16x4Func { return map[Type]gemvF32x16x4Func{} }

func fastGemv8x4(vnni bool) map[Type]gemv8x4Func { return map[Type]gemv8x4Func{} }

func dequantFast(t Type, dst []float32, src []byte) bool { return false }

func fastGemvF32x16x2(avx512 bool) map[Type]gemvF32x16x4Func { return map[Type]gemvF32x16x4Func{} }

func fastGemvF32x4(avx2 bool) map[Type]gemvF32x2Func { return map[Type]gemvF32x2Func{} }

func fastGemvF32x16x8(avx512 bool) map[Type]gemvF32x16x4Func { return map[Type]gemvF32x16x4Func{} }
