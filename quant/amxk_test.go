package quant

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// amxk_amd64.s is what amxk_gen.go writes today.
func TestAMXGenerated(t *testing.T) { checkGenerated(t, "amxk_gen.go", "amxk_amd64.s") }

// MatMul and MatMulShared on AMX tiles (Q4_K and Q6_K, sixteen tokens and
// more) equal the one-token VNNI kernel bitwise for every row and token: on
// realistic and arbitrary blocks (every scale and minimum at its extremes
// somewhere), activations at their extremes, batches that leave tokens
// over for the four- and one-token kernels, and rows that leave a group
// without a partner.
func TestAMXBitwise(t *testing.T) {
	if !hasAMXInt8 {
		t.Skip("no AMX-INT8 here (or CLAWRL_AMX=0)")
	}
	rng := rand.New(rand.NewPCG(41, 42))
	const cols = 768
	for _, ty := range []Type{Q4_K, Q6_K} {
		for _, rows := range []int{40, 64} {
			for name, m := range kquantMatrices(rng, ty, rows, cols) {
				pk := pack(m)
				nb := cols / QKK
				gsize := nb * packedBlockBytes(ty)
				for _, T := range []int{16, 21, 24, 35, 48, 59, 141, 150} {
					x := randRow(rng, T*cols, 1)
					copy(x[3*cols:4*cols], extremeActs(cols))
					out := make([]float32, T*rows)
					MatMul(out, x, T, m)
					var a Act
					a.Quantize(ty, x, T, cols)
					a.prepare(ty)
					for tk := 0; tk < T; tk++ {
						for g := 0; g < rows/packRows; g++ {
							var want [packRows]float32
							gemv8[ty](nb, &pk[g*gsize], &a.qs[tk*cols], a.scales(tk), a.sums(ty, tk), &want[0])
							for r := range want {
								if got := out[tk*rows+g*packRows+r]; math.Float32bits(got) != math.Float32bits(want[r]) {
									t.Fatalf("%v %s rows=%d T=%d: out[%d, %d] = %v, VNNI kernel %v", ty, name, rows, T, tk, g*packRows+r, got, want[r])
								}
							}
						}
					}
				}
			}
		}
	}
	// MatMulShared: matrices of 24 and 40 rows, so pairs straddle them in
	// the joint numbering.
	ms := []*Matrix{
		quantRows(Q4_K, randRow(rng, 24*cols, 0.05), 24, cols),
		quantRows(Q4_K, randRow(rng, 40*cols, 0.05), 40, cols),
	}
	const T = 45 // two tiles and a padded one
	x := randRow(rng, T*cols, 1)
	outs := [][]float32{make([]float32, T*24), make([]float32, T*40)}
	MatMulShared(outs, x, T, ms)
	for i, m := range ms {
		want := make([]float32, T*m.Rows)
		hasAMXInt8 = false
		MatMul(want, x, T, m)
		hasAMXInt8 = true
		for j := range want {
			if math.Float32bits(outs[i][j]) != math.Float32bits(want[j]) {
				t.Fatalf("MatMulShared matrix %d: out[%d] = %v, VNNI %v", i, j, outs[i][j], want[j])
			}
		}
	}
}

// BenchmarkAMX runs Qwen2.5-1.5B's shapes (q/o 1536×1536, gate/up
// 8960×1536, down 1536×8960 in Q4_K; down and v 256×1536 in Q6_K, as the
// Q4_K_M file has half its layers' v and down) at prefill and training
// batches, on the AMX tiles and on the VNNI kernels alternately in the
// same loop: cpu-ms per product each, and amx/vnni their ratio. The blocks
// are random bytes (the speed does not depend on the values).
func BenchmarkAMX(b *testing.B) {
	if !hasAMXInt8 {
		b.Skip("no AMX-INT8 here (or CLAWRL_AMX=0)")
	}
	rng := rand.New(rand.NewPCG(43, 44))
	for _, s := range []struct {
		name       string
		t          Type
		rows, cols int
	}{{"q_o", Q4_K, 1536, 1536}, {"gate_up", Q4_K, 8960, 1536}, {"down", Q4_K, 1536, 8960}, {"down", Q6_K, 1536, 8960}, {"v", Q6_K, 256, 1536}} {
		m := randomBlocks(rng, s.t, s.rows, s.cols)
		m.packedData()
		for _, T := range []int{16, 64, 190} {
			x := randRow(rng, T*s.cols, 1)
			out := make([]float32, T*s.rows)
			b.Run(fmt.Sprintf("%s_%v_%dx%d/T=%d", s.name, s.t, s.rows, s.cols, T), func(b *testing.B) {
				defer func() { hasAMXInt8 = true }()
				var amx, vnni time.Duration
				for b.Loop() {
					hasAMXInt8 = false
					c0 := processCPU()
					MatMul(out, x, T, m)
					c1 := processCPU()
					hasAMXInt8 = true
					MatMul(out, x, T, m)
					vnni, amx = vnni+c1-c0, amx+processCPU()-c1
				}
				n := float64(b.N)
				b.ReportMetric(float64(vnni.Microseconds())/n/1e3, "vnni-cpu-ms")
				b.ReportMetric(float64(amx.Microseconds())/n/1e3, "amx-cpu-ms")
				b.ReportMetric(float64(amx)/float64(vnni), "amx/vnni")
			})
		}
	}
}
