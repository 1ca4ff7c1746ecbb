package quant

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/clawrl/clawrl/blas"
)

// MatMul equals the reference dot of every (row, token) pair within float
// rounding, through the int8 path and the dequantized-tile path (which
// skips activation quantization, so its bound is the Q8 activation error:
// 1% of Σ|w·x|).
func TestMatMulMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	defer func(v int) { dequantMinT = v }(dequantMinT)
	for _, ty := range allTypes {
		const rows, cols, T = 37, 512, 5
		m := quantRows(ty, randRow(rng, rows*cols, 0.05), rows, cols)
		x := randRow(rng, T*cols, 1)
		var a Act
		a.Quantize(ty, x, T, cols)
		wf := make([]float32, rows*cols)
		m.DequantizeRows(wf, 0, rows)
		for _, path := range []string{"int8", "dequant"} {
			dequantMinT = 1 << 30
			bound := 1e-5
			if path == "dequant" {
				dequantMinT, bound = 1, 1e-2
			}
			out := make([]float32, T*rows)
			MatMul(out, x, T, m)
			for tk := 0; tk < T; tk++ {
				for r := 0; r < rows; r++ {
					want := dotRef[ty](m.Row(r), a.row(tk))
					var mag float64
					for i := 0; i < cols; i++ {
						mag += math.Abs(float64(wf[r*cols+i] * x[tk*cols+i]))
					}
					if got := out[tk*rows+r]; math.Abs(float64(got-want)) > bound*mag+1e-6 {
						t.Fatalf("%v %s: out[%d,%d] = %v, reference %v", ty, path, tk, r, got, want)
					}
				}
			}
		}
	}
}

func TestMatMulNN(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const rows, cols, T = 300, 256, 3
	for _, ty := range []Type{Q4_1, Q8_0, Q6_K} {
		m := quantRows(ty, randRow(rng, rows*cols, 0.05), rows, cols)
		wf := make([]float32, rows*cols)
		m.DequantizeRows(wf, 0, rows)
		dy := randRow(rng, T*rows, 1)
		want := make([]float32, T*cols)
		blas.SgemmGo(false, false, T, cols, rows, 1, dy, rows, wf, cols, 0, want, cols)
		got := randRow(rng, T*cols, 1) // overwritten
		MatMulNN(got, dy, T, m, false)
		for i := range want {
			if math.Abs(float64(got[i]-want[i])) > 1e-4 {
				t.Fatalf("%v: dx[%d] = %v, want %v", ty, i, got[i], want[i])
			}
		}
		MatMulNN(got, dy, T, m, true)
		for i := range want {
			if math.Abs(float64(got[i]-2*want[i])) > 2e-4 {
				t.Fatalf("%v accumulate: dx[%d] = %v, want %v", ty, i, got[i], 2*want[i])
			}
		}
	}
}

// BenchmarkMatMul runs the demo model's (SmolLM2-135M) shapes: rows×cols of
// q/o (576×576), gate/up (1536×576), down (576×1536) in Q4_1, and the tied
// embedding head (49152×576) in Q8_0, Qwen3-0.6B's gate (Q4_K, Q5_K) and
// down (Q6_K), and gate/up in Q4_0, Q5_0 and Q5_1, at decode (T=1, 4) and
// prefill batches. GB/s counts the weight bytes streamed per call.
func BenchmarkMatMul(b *testing.B) {
	shapes := []struct {
		name       string
		t          Type
		rows, cols int
	}{
		{"q_o", Q4_1, 576, 576}, {"gate_up", Q4_1, 1536, 576}, {"down", Q4_1, 576, 1536}, {"head", Q8_0, 49152, 576},
		{"qwen3_gate", Q4_K, 3072, 1024}, {"qwen3_down", Q6_K, 1024, 3072}, {"qwen3_gate", Q5_K, 3072, 1024},
		{"gate_up", Q4_0, 1536, 576}, {"gate_up", Q5_0, 1536, 576}, {"gate_up", Q5_1, 1536, 576},
	}
	rng := rand.New(rand.NewPCG(1, 1))
	for _, s := range shapes {
		m := quantRows(s.t, randRow(rng, s.rows*s.cols, 0.05), s.rows, s.cols)
		for _, T := range []int{1, 4, 16, 64, 256} {
			if s.rows == 49152 && T > 64 {
				continue
			}
			x := randRow(rng, T*s.cols, 1)
			out := make([]float32, T*s.rows)
			for _, path := range []string{"int8", "packed", "dequant"} {
				if path == "dequant" && T < 16 || path == "packed" && m.packedData() == nil {
					continue
				}
				b.Run(fmt.Sprintf("%s_%v_%dx%d/T=%d/%s", s.name, s.t, s.rows, s.cols, T, path), func(b *testing.B) {
					defer func(v, p int) { dequantMinT, packedMaxT = v, p }(dequantMinT, packedMaxT)
					dequantMinT, packedMaxT = 1<<30, 0
					switch path {
					case "dequant":
						dequantMinT = 1
					case "packed":
						packedMaxT = 1 << 30
					}
					cpu0 := processCPU()
					for b.Loop() {
						MatMul(out, x, T, m)
					}
					b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
					sec := b.Elapsed().Seconds() / float64(b.N)
					b.ReportMetric(float64(len(m.Data))/sec/1e9, "GB/s")
					b.ReportMetric(2*float64(T)*float64(s.rows*s.cols)/sec/1e9, "GFLOP/s")
				})
			}
		}
	}
}

// BenchmarkDot times one kernel call over a 1536-wide row (48 blocks),
// single goroutine: ns per block is the compute cost the matmul pays.
func BenchmarkDot(b *testing.B) {
	rng := rand.New(rand.NewPCG(2, 2))
	const cols = 1536
	for _, ty := range allTypes {
		m := quantRows(ty, randRow(rng, cols, 0.05), 1, cols)
		var a Act
		a.Quantize(ty, randRow(rng, cols, 1), 1, cols)
		ar := a.row(0)
		for name, f := range map[string]func([]byte, actRow) float32{"ref": dotRef[ty], "fast": dots[ty]} {
			b.Run(fmt.Sprintf("%v/%s", ty, name), func(b *testing.B) {
				var s float32
				for b.Loop() {
					s += f(m.Row(0), ar)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(cols/ty.BlockSize())*float64(QK)/float64(ty.BlockSize()), "ns/32values")
			})
		}
	}
}

// BenchmarkMatMulStream streams matrices too large for the caches at T=1
// (Qwen3-0.6B's tied Q6_K head, 151,936×1,024, 127 MB; a 35 MB Q4_K
// stack), as decode does with every matrix: GB/cpu-s is the weight bytes
// per CPU-second, the figure the packed kernels' prefetch distance was
// chosen by. The blocks are random bytes (the speed does not depend on the
// values).
func BenchmarkMatMulStream(b *testing.B) {
	rng := rand.New(rand.NewPCG(27, 28))
	for _, s := range []struct {
		t          Type
		rows, cols int
	}{{Q6_K, 151936, 1024}, {Q4_K, 61440, 1024}} {
		m := randomBlocks(rng, s.t, s.rows, s.cols)
		m.packedData()
		x := randRow(rng, s.cols, 1)
		out := make([]float32, s.rows)
		b.Run(fmt.Sprintf("%v_%dx%d", s.t, s.rows, s.cols), func(b *testing.B) {
			cpu0 := processCPU()
			for b.Loop() {
				MatMul(out, x, 1, m)
			}
			cpu := float64((processCPU() - cpu0).Nanoseconds()) / float64(b.N)
			b.ReportMetric(cpu, "cpu-ns/op")
			b.ReportMetric(float64(len(m.Data))/cpu, "GB/cpu-s")
		})
	}
}
