package quant

import (
	"testing"
)

// FuzzMatrix feeds arbitrary bytes as a matrix of each type (the blocks of
// a GGUF tensor are outside input): NewMatrix either rejects the size or
// the matrix dequantizes and multiplies without panicking. (Agreement of
// the kernels is tested on realistic blocks in quant_test.go: on arbitrary
// bytes the block terms can cancel far below their rounding.)
func FuzzMatrix(f *testing.F) {
	f.Add(uint8(3), uint8(1), uint8(1), make([]byte, 20))
	f.Add(uint8(8), uint8(2), uint8(1), make([]byte, 68))
	f.Add(uint8(12), uint8(1), uint8(1), make([]byte, 144))
	f.Add(uint8(14), uint8(1), uint8(1), make([]byte, 210))
	f.Fuzz(func(t *testing.T, typ, rows, blocks uint8, data []byte) {
		ty := Type(typ)
		cols := int(blocks) * max(ty.BlockSize(), 1)
		m, err := NewMatrix(ty, int(rows), cols, data)
		if err != nil {
			return
		}
		w := make([]float32, m.Rows*m.Cols)
		m.DequantizeRows(w, 0, m.Rows)
		const T = 5
		x := make([]float32, T*cols)
		for i := range x {
			x[i] = float32(i%7) - 3
		}
		out := make([]float32, T*m.Rows)
		MatMul(out, x, T, m)
		dy := make([]float32, T*m.Rows)
		dx := make([]float32, T*cols)
		MatMulNN(dx, dy, T, m, false)
	})
}
