package quant

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// kTermMag is Σ over a row's values of |each term the K-quant dot sums|
// (d·sc·q·a and dmin·m·a for Q4_K and Q5_K, d·sc·(q−32)·a for Q6_K, times the
// activation's d): the scale of the float rounding in any order of
// summation, even where the terms cancel.
func kTermMag(ty Type, w []byte, a actRow) float64 {
	var mag float64
	for b := 0; b < len(a.qs)/QKK; b++ {
		q := a.qs[QKK*b:]
		da := math.Abs(float64(a.ds[b]))
		switch ty {
		case Q4_K:
			blk := w[144*b:]
			d, dmin := math.Abs(float64(f16at(blk, 0))), math.Abs(float64(f16at(blk, 2)))
			for s := 0; s < 8; s++ {
				sc, m := scaleMinK4(s, blk[4:16])
				for l := 0; l < 32; l++ {
					v := float64(blk[16+32*(s/2)+l] >> (4 * (s % 2)) & 15)
					x := math.Abs(float64(q[32*s+l]))
					mag += (d*float64(sc)*v + dmin*float64(m)) * x * da
				}
			}
		case Q5_K:
			blk := w[176*b:]
			d, dmin := math.Abs(float64(f16at(blk, 0))), math.Abs(float64(f16at(blk, 2)))
			for s := 0; s < 8; s++ {
				sc, m := scaleMinK4(s, blk[4:16])
				for l := 0; l < 32; l++ {
					v := float64(blk[48+32*(s/2)+l]>>(4*(s%2))&15 | (blk[16+l]>>s&1)<<4)
					x := math.Abs(float64(q[32*s+l]))
					mag += (d*float64(sc)*v + dmin*float64(m)) * x * da
				}
			}
		case Q6_K:
			blk := w[210*b:]
			d := math.Abs(float64(f16at(blk, 208)))
			for i := 0; i < QKK; i++ {
				n, l := i/128, i%32
				part := i % 128 / 32
				lo := blk[64*n+l+32*(part%2)]
				if part >= 2 {
					lo >>= 4
				}
				h := blk[128+32*n+l] >> (2 * part) & 3
				v := float64(int(lo&15|h<<4) - 32)
				sc := float64(int8(blk[192+i/16]))
				mag += math.Abs(d*sc*v*float64(q[i])) * da
			}
		}
	}
	return mag
}

// kquantMatrices are realistic blocks (the min/max quantizer) and blocks of
// arbitrary bytes with finite d: every scale, minimum and value at its
// extremes somewhere (Q6_K scales −128..127, values 0..63).
func kquantMatrices(rng *rand.Rand, ty Type, rows, cols int) map[string]*Matrix {
	real := quantRows(ty, randRow(rng, rows*cols, 0.05), rows, cols)
	raw := make([]byte, len(real.Data))
	for i := range raw {
		raw[i] = byte(rng.Uint32())
	}
	bb := ty.BlockBytes()
	for off := 0; off < len(raw); off += bb {
		d := float32(rng.Float64()*0.01 + 1e-4)
		switch ty {
		case Q4_K, Q5_K:
			binary.LittleEndian.PutUint16(raw[off:], F32ToF16(d))
			binary.LittleEndian.PutUint16(raw[off+2:], F32ToF16(d/2))
		case Q6_K:
			binary.LittleEndian.PutUint16(raw[off+208:], F32ToF16(-d))
		}
	}
	rawM, err := NewMatrix(ty, rows, cols, raw)
	if err != nil {
		panic(err)
	}
	return map[string]*Matrix{"quantized": real, "arbitrary bytes": rawM}
}

// The packed Q4_K, Q5_K and Q6_K kernels (AVX2 and VNNI, each this CPU runs) equal
// the reference dot of every row within float rounding (1e-5 of the
// terms' magnitude), on real and extreme blocks and activations; so does
// MatMul through the packed path, for every batch size's code path.
func TestPackedKQuants(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	const rows, cols = 24, 768
	for _, ty := range []Type{Q4_K, Q5_K, Q6_K} {
		for name, m := range kquantMatrices(rng, ty, rows, cols) {
			pk := pack(m)
			nb := cols / QKK
			gsize := nb * packedBlockBytes(ty)
			for xi, x := range [][]float32{randRow(rng, cols, 1), extremeActs(cols)} {
				var a Act
				a.Quantize(ty, x, 1, cols)
				a.prepare(ty)
				ran := 0
				for _, v := range []struct {
					name   string
					packed gemv8Func
				}{
					{"avx2", fastGemv8(false, false, hasAVX2)[ty]},
					{"vnni", fastGemv8(hasVNNI, false, hasAVX2)[ty]},
					{"avxvnni", fastGemv8(false, hasAVXVNNI, hasAVX2)[ty]},
				} {
					if v.packed == nil || v.name == "vnni" && !hasVNNI || v.name == "avxvnni" && !hasAVXVNNI {
						continue
					}
					for g := 0; g < rows/packRows; g++ {
						var got [packRows]float32
						v.packed(nb, &pk[g*gsize], &a.qs[0], a.scales(0), a.sums(ty, 0), &got[0])
						for r := 0; r < packRows; r++ {
							row := g*packRows + r
							want := dotRef[ty](m.Row(row), a.row(0))
							if mag := kTermMag(ty, m.Row(row), a.row(0)); math.Abs(float64(got[r]-want)) > 1e-5*mag+1e-6 {
								t.Fatalf("%v %s, %s, activations %d, row %d: packed %v, reference %v (terms %.3g)", ty, v.name, name, xi, row, got[r], want, mag)
							}
							ran++
						}
					}
				}
				t.Logf("%v %s activations %d: %d packed rows checked", ty, name, xi, ran)
			}
			if m.packedData() == nil {
				continue // no packed kernel on this CPU
			}
			for _, T := range []int{1, 2, 3, 4, 5, 17} {
				xs := randRow(rng, T*cols, 1)
				var at Act
				at.Quantize(ty, xs, T, cols)
				out := make([]float32, T*rows)
				MatMul(out, xs, T, m)
				for tk := 0; tk < T; tk++ {
					for r := 0; r < rows; r++ {
						want := dotRef[ty](m.Row(r), at.row(tk))
						mag := kTermMag(ty, m.Row(r), at.row(tk))
						if got := out[tk*rows+r]; math.Abs(float64(got-want)) > 1e-5*mag+1e-6 {
							t.Fatalf("%v %s T=%d: out[%d,%d] = %v, reference %v", ty, name, T, tk, r, got, want)
						}
					}
				}
			}
		}
	}
}

// extremeActs quantizes to ±127 everywhere (the Q8_K scale maps the
// largest magnitude to −127 and every value has it).
func extremeActs(n int) []float32 {
	x := make([]float32, n)
	for j := range x {
		x[j] = float32(1 - 2*(j*7%3&1))
	}
	return x
}

// The packed Q4_0, Q5_0 and Q5_1 kernels equal the reference dot within
// float rounding (1e-5 of Σ|w·x| over the dequantized values: the block
// sums are exact integers), on quantized blocks and on arbitrary nibbles
// and fifth bits, with ±127 activations; so does MatMul through them.
func TestPackedQ4_0Q5(t *testing.T) {
	for _, ty := range []Type{Q4_0, Q5_0, Q5_1} {
		testPacked32(t, ty)
	}
}

func testPacked32(t *testing.T, ty Type) {
	rng := rand.New(rand.NewPCG(33, uint64(ty)))
	const rows, cols = 24, 576
	real := quantRows(ty, randRow(rng, rows*cols, 0.05), rows, cols)
	raw := make([]byte, len(real.Data))
	for i := range raw {
		raw[i] = byte(rng.Uint32())
	}
	for off := 0; off < len(raw); off += ty.BlockBytes() {
		binary.LittleEndian.PutUint16(raw[off:], F32ToF16(float32(rng.Float64()*0.02-0.01)))
		if ty == Q5_1 {
			binary.LittleEndian.PutUint16(raw[off+2:], F32ToF16(float32(rng.Float64()*0.02-0.01)))
		}
	}
	rawM, err := NewMatrix(ty, rows, cols, raw)
	if err != nil {
		t.Fatal(err)
	}
	mag := func(m *Matrix, r int, a *Act, tk int) float64 {
		w := make([]float32, cols)
		m.DequantizeRows(w, r, r+1)
		var s float64
		for i, x := range a.dequantize(tk) {
			s += math.Abs(float64(w[i] * x))
		}
		return s
	}
	for name, m := range map[string]*Matrix{"quantized": real, "arbitrary bytes": rawM} {
		pk := pack(m)
		nb := cols / QK
		gsize := nb * packedBlockBytes(ty)
		for xi, x := range [][]float32{randRow(rng, cols, 1), extremeActs(cols)} {
			var a Act
			a.Quantize(ty, x, 1, cols)
			a.prepare(ty)
			for _, v := range []struct {
				name   string
				packed gemv8Func
			}{
				{"avx2", fastGemv8(false, false, hasAVX2)[ty]},
				{"vnni", fastGemv8(hasVNNI, false, hasAVX2)[ty]},
			} {
				if v.packed == nil || v.name == "vnni" && !hasVNNI {
					continue
				}
				for g := 0; g < rows/packRows; g++ {
					var got [packRows]float32
					v.packed(nb, &pk[g*gsize], &a.qs[0], a.scales(0), a.sums(ty, 0), &got[0])
					for r := 0; r < packRows; r++ {
						row := g*packRows + r
						want := dotRef[ty](m.Row(row), a.row(0))
						if math.Abs(float64(got[r]-want)) > 1e-5*mag(m, row, &a, 0)+1e-6 {
							t.Fatalf("%v %s, %s, activations %d, row %d: packed %v, reference %v", ty, v.name, name, xi, row, got[r], want)
						}
					}
				}
			}
		}
		if m.packedData() == nil {
			continue
		}
		for _, T := range []int{1, 4, 7} {
			xs := randRow(rng, T*cols, 1)
			var at Act
			at.Quantize(ty, xs, T, cols)
			out := make([]float32, T*rows)
			MatMul(out, xs, T, m)
			for tk := 0; tk < T; tk++ {
				for r := 0; r < rows; r++ {
					want := dotRef[ty](m.Row(r), at.row(tk))
					if got := out[tk*rows+r]; math.Abs(float64(got-want)) > 1e-5*mag(m, r, &at, tk)+1e-6 {
						t.Fatalf("%v %s T=%d: out[%d,%d] = %v, reference %v", ty, name, T, tk, r, got, want)
					}
				}
			}
		}
	}
}

// The four- and two-token packed kernels (prefill and decode batches;
// Q4_K, Q6_K, Q5_0 and Q8_0, the last two tokens at a time, which is also
// Q8_0's two-token kernel) give every token the one-token kernel's
// outputs bitwise: random-byte blocks (every scale, minimum and nibble a
// file may hold) and quantized ones, tokens of activations of mixed
// magnitude.
func TestPackedFourTokenKernelsBitwise(t *testing.T) {
	if len(gemv8x4) == 0 {
		t.Skip("no four-token packed kernels on this CPU (AVX-512 VNNI)")
	}
	rng := rand.New(rand.NewPCG(51, 52))
	for _, n := range []int{4, 2} {
		kernels := map[int]map[Type]gemv8x4Func{4: gemv8x4, 2: gemv8x2}[n]
		if n == 2 && len(kernels) != 3 {
			t.Fatalf("%d two-token kernels, want Q4_K, Q6_K and Q8_0's", len(kernels))
		}
		for ty, kn := range kernels {
			k := gemv8[ty]
			for _, src := range []string{"random", "quantized"} {
				const rows, cols = 24, 1024
				pk := pack(testBlocks(rng, ty, src, rows, cols))
				x := randRow(rng, n*cols, 2)
				for i := range x {
					x[i] *= float32(math.Exp(rng.NormFloat64()))
				}
				var a Act
				a.Quantize(ty, x, n, cols)
				a.prepare(ty)
				nb := cols / ty.BlockSize()
				gsize := nb * packedBlockBytes(ty)
				const ldo = 32
				for g := 0; g < rows/packRows; g++ {
					var want, got [4 * ldo]float32
					for tok := 0; tok < n; tok++ {
						k(nb, &pk[g*gsize], &a.qs[tok*cols], a.scales(tok), a.sums(ty, tok), &want[tok*ldo])
					}
					kn(nb, &pk[g*gsize], &a.qs[0], cols, a.scales(0), a.scaleStride(), a.sums(ty, 0), 4*sumsPerRow(ty, cols), &got[0], 4*ldo)
					for i := range want {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%v %s group %d token %d row %d: %d-token kernel %v, one-token %v", ty, src, g, i/ldo, i%ldo, n, got[i], want[i])
						}
					}
				}
			}
		}
	}
}

// testBlocks is a rows × cols matrix of ty: random bytes (every scale,
// minimum and value a file may hold) or the blocks of quantized values.
func testBlocks(rng *rand.Rand, ty Type, src string, rows, cols int) *Matrix {
	if src == "quantized" {
		return quantRows(ty, randRow(rng, rows*cols, 0.05), rows, cols)
	}
	return randomBlocks(rng, ty, rows, cols)
}

// packedkv_amd64.s is what packedkv_gen.go writes today.
func TestPackedKVGenerated(t *testing.T) { checkGenerated(t, "packedkv_gen.go", "packedkv_amd64.s") }

// packedk2_amd64.s is what packedk2_gen.go writes today from
// packedk4_amd64.s.
func TestPackedK2Generated(t *testing.T) { checkGenerated(t, "packedk2_gen.go", "packedk2_amd64.s") }

// MatMul on a K-quant matrix gives each token of a batch of 2 to 9 (fours,
// then twos, then ones) bitwise the output it gets alone.
func TestPackedKQuantBatches(t *testing.T) {
	rng := rand.New(rand.NewPCG(53, 54))
	const rows, cols = 24, 1024
	for _, ty := range []Type{Q4_K, Q6_K} {
		m := quantRows(ty, randRow(rng, rows*cols, 0.05), rows, cols)
		for T := 2; T <= 9; T++ {
			xs := randRow(rng, T*cols, 1)
			out := make([]float32, T*rows)
			MatMul(out, xs, T, m)
			alone := make([]float32, rows)
			for tk := 0; tk < T; tk++ {
				MatMul(alone, xs[tk*cols:(tk+1)*cols], 1, m)
				for r := 0; r < rows; r++ {
					if got, want := out[tk*rows+r], alone[r]; math.Float32bits(got) != math.Float32bits(want) {
						t.Fatalf("%v T=%d: out[%d,%d] = %v, alone %v", ty, T, tk, r, got, want)
					}
				}
			}
		}
	}
}
