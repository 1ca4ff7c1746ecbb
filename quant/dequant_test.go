package quant

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/clawrl/clawrl/gguf"
)

// Matrix.DequantizeRows' vector widening of Q8_0 and Q5_0 blocks is gguf's
// scalar dequantization bit for bit: random bytes (every fifth-bit and
// nibble pattern, scales of every magnitude, subnormal halves included;
// NaN scales need only stay NaN), from one block to many.
func TestDequantFastBitwise(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no AVX2: the scalar loops run")
	}
	rng := rand.New(rand.NewPCG(7, 1))
	for _, typ := range []Type{Q8_0, Q5_0} {
		for _, nb := range []int{1, 2, 7, 28, 152} {
			src := make([]byte, nb*typ.BlockBytes())
			for i := range src {
				src[i] = byte(rng.Uint32())
			}
			if nb == 7 {
				// Subnormal, zero and largest finite scales.
				for b, h := range []uint16{0x0001, 0x03ff, 0x8000, 0x0000, 0x7bff, 0xfbff, 0x3c00} {
					src[b*typ.BlockBytes()] = byte(h)
					src[b*typ.BlockBytes()+1] = byte(h >> 8)
				}
			}
			want := make([]float32, nb*QK)
			if err := gguf.Dequantize(gguf.Type(typ), src, want); err != nil {
				t.Fatal(err)
			}
			got := make([]float32, nb*QK)
			if !dequantFast(typ, got, src) {
				t.Fatalf("%v: no fast path", typ)
			}
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(math.IsNaN(float64(got[i])) && math.IsNaN(float64(want[i]))) {
					t.Fatalf("%v, %d blocks: weight %d = %v, want %v", typ, nb, i, got[i], want[i])
				}
			}
		}
	}
}

// BenchmarkDequantRows: widening the student's 4,864 × 896 Q5_0 up
// projection, 256 rows at a time, vector and scalar.
func BenchmarkDequantRows(b *testing.B) {
	const rows, cols = 256, 896
	src := make([]byte, rows*cols/QK*Q5_0.BlockBytes())
	for i := range src {
		src[i] = byte(i * 7)
	}
	dst := make([]float32, rows*cols)
	b.Run("vector", func(b *testing.B) {
		for range b.N {
			dequantFast(Q5_0, dst, src)
		}
	})
	b.Run("scalar", func(b *testing.B) {
		for range b.N {
			DequantizeRow(Q5_0, dst, src)
		}
	})
}
