//go:build !purego

package quant

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// avx2Macro are packedk_amd64.s's AVX2 one-token Q4_K and Q6_K kernels (the
// macro forms): the bits the sixteen-register kernels are held to, and the
// kernels they replaced.
var avx2Macro = map[Type]gemv8Func{Q4_K: gemvQ4Kx8AVX2, Q6_K: gemvQ6Kx8AVX2}

// The sixteen-register Q4_K and Q6_K kernels (packedkv_amd64.s): AVX-VNNI's
// for one token and for two, AVX2's for two and Q4_K's for one, give every
// token the outputs of packedk_amd64.s's AVX2 one-token kernels (the
// macro forms, kept as this oracle) bitwise: random-byte blocks (every
// scale, minimum and value a file may hold), quantized ones, activations
// of mixed magnitude and ones at ±127.
func TestPackedYMMBitwise(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no AVX2 on this CPU")
	}
	rng := rand.New(rand.NewPCG(55, 56))
	sets := []struct {
		name string
		on   bool
		k1s  map[Type]gemv8Func
		k2s  map[Type]gemv8x4Func
	}{
		{"avx-vnni", hasAVXVNNI, fastGemv8(false, true, true), fastGemv8x2(false, true, false)},
		{"avx2", true, fastGemv8(false, false, true), fastGemv8x2(false, false, true)},
	}
	for _, set := range sets {
		if !set.on {
			t.Logf("%s: not on this CPU (or switched off)", set.name)
			continue
		}
		for _, ty := range []Type{Q4_K, Q6_K} {
			k, k1, k2 := avx2Macro[ty], set.k1s[ty], set.k2s[ty]
			if k2 == nil {
				t.Fatalf("%s: no two-token %v kernel", set.name, ty)
			}
			for _, src := range []string{"random", "quantized"} {
				const rows, cols = 24, 1024
				pk := pack(testBlocks(rng, ty, src, rows, cols))
				for xi, x := range [][]float32{randRow(rng, 2*cols, 2), extremeActs(2 * cols)} {
					if xi == 0 {
						for i := range x {
							x[i] *= float32(math.Exp(rng.NormFloat64()))
						}
					}
					var a Act
					a.Quantize(ty, x, 2, cols)
					a.prepare(ty)
					nb := cols / ty.BlockSize()
					gsize := nb * packedBlockBytes(ty)
					const ldo = 16
					for g := 0; g < rows/packRows; g++ {
						var want, one, two [2 * ldo]float32
						for tok := 0; tok < 2; tok++ {
							k(nb, &pk[g*gsize], &a.qs[tok*cols], a.scales(tok), a.sums(ty, tok), &want[tok*ldo])
							k1(nb, &pk[g*gsize], &a.qs[tok*cols], a.scales(tok), a.sums(ty, tok), &one[tok*ldo])
						}
						k2(nb, &pk[g*gsize], &a.qs[0], cols, a.scales(0), a.scaleStride(), a.sums(ty, 0), 4*sumsPerRow(ty, cols), &two[0], 4*ldo)
						for i := range want {
							if math.Float32bits(one[i]) != math.Float32bits(want[i]) || math.Float32bits(two[i]) != math.Float32bits(want[i]) {
								t.Fatalf("%s %v %s activations %d group %d token %d row %d: one-token %v, two-token %v, AVX2 %v", set.name, ty, src, xi, g, i/ldo, i%ldo, one[i], two[i], want[i])
							}
						}
					}
				}
			}
		}
	}
}

// BenchmarkPackedYMM times MatMul at Qwen2.5-Coder-1.5B's shapes (the demo
// model's teacher; ffn gate Q4_K 8960×1536, ffn down Q6_K 1536×8960) on
// the sixteen-register kernels this CPU runs (AVX-VNNI's or AVX2's, one
// token or two at a time) beside the same MatMul on packedk_amd64.s's AVX2
// one-token kernels (the kernels before them), alternated call by call:
// ns/op is the pair, before-ns and after-ns each side, and ×before their
// ratio. The weights (13–15 MB) stream from memory as in decode. On a CPU
// with AVX-512 VNNI, whose kernels these are not, run it with
// CLAWRL_AVX512=0.
func BenchmarkPackedYMM(b *testing.B) {
	if !hasAVX2 || hasVNNI {
		b.Skip("no AVX2 on this CPU, or AVX-512 VNNI's kernels run (CLAWRL_AVX512=0 runs these)")
	}
	rng := rand.New(rand.NewPCG(57, 58))
	for _, s := range []struct {
		name       string
		t          Type
		rows, cols int
	}{{"gate", Q4_K, 8960, 1536}, {"down", Q6_K, 1536, 8960}} {
		m := randomBlocks(rng, s.t, s.rows, s.cols)
		m.packedData()
		for _, T := range []int{1, 2, 4, 8} {
			x := randRow(rng, T*s.cols, 1)
			out := make([]float32, T*s.rows)
			b.Run(fmt.Sprintf("%s_%v_%dx%d/T=%d", s.name, s.t, s.rows, s.cols, T), func(b *testing.B) {
				k1, k2 := gemv8[s.t], gemv8x2[s.t]
				before := func() {
					gemv8[s.t], gemv8x2[s.t] = avx2Macro[s.t], nil
					defer func() { gemv8[s.t], gemv8x2[s.t] = k1, k2 }()
					MatMul(out, x, T, m)
				}
				var old, cur time.Duration
				for b.Loop() {
					t0 := time.Now()
					before()
					t1 := time.Now()
					MatMul(out, x, T, m)
					old, cur = old+t1.Sub(t0), cur+time.Since(t1)
				}
				b.ReportMetric(float64(old.Nanoseconds())/float64(b.N), "before-ns")
				b.ReportMetric(float64(cur.Nanoseconds())/float64(b.N), "after-ns")
				b.ReportMetric(float64(old)/float64(cur), "×before")
			})
		}
	}
}
