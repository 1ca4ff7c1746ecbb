//go:build !purego

package quant

//go:noescape
func dequantQ8_0AVX2(nb int, src *byte, dst *float32)

//go:noescape
func dequantQ5_0AVX2(nb int, src *byte, dst *float32)

// dequantFast widens whole Q8_0 or Q5_0 blocks with AVX2, the scalar
// loops' bits; false for other types or without AVX2.
func dequantFast(t Type, dst []float32, src []byte) bool {
	if !hasAVX2 || len(dst) == 0 {
		return false
	}
	nb := len(dst) / QK
	switch t {
	case Q8_0:
		_ = src[nb*34-1]
		_ = dst[nb*QK-1]
		dequantQ8_0AVX2(nb, &src[0], &dst[0])
	case Q5_0:
		// The last block's 16-byte load reaches byte 6 + 16 = 22: inside it.
		_ = src[nb*22-1]
		_ = dst[nb*QK-1]
		dequantQ5_0AVX2(nb, &src[0], &dst[0])
	default:
		return false
	}
	return true
}
