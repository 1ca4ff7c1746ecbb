package blas

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// naive is the textbook triple loop in float64, the reference for Sgemm.
func naive(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for p := 0; p < k; p++ {
				var av, bv float32
				if transA {
					av = a[p*lda+i]
				} else {
					av = a[i*lda+p]
				}
				if transB {
					bv = b[j*ldb+p]
				} else {
					bv = b[p*ldb+j]
				}
				s += float64(av) * float64(bv)
			}
			v := float64(alpha) * s
			if beta != 0 {
				v += float64(beta) * float64(c[i*ldc+j])
			}
			c[i*ldc+j] = float32(v)
		}
	}
}

func randSlice(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}

func TestSgemm(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	shapes := [][3]int{{1, 1, 1}, {1, 7, 5}, {5, 1, 9}, {4, 4, 4}, {7, 13, 33}, {33, 70, 129}, {64, 256, 96}, {3, 5, 0}}
	impls := map[string]func(bool, bool, int, int, int, float32, []float32, int, []float32, int, float32, []float32, int){"Sgemm": Sgemm, "SgemmGo": SgemmGo}
	for name, f := range impls {
		for _, s := range shapes {
			for _, tr := range [][2]bool{{false, false}, {false, true}, {true, false}, {true, true}} {
				for _, ab := range [][2]float32{{1, 0}, {0.5, 2}} {
					m, n, k := s[0], s[1], s[2]
					t.Run(fmt.Sprintf("%s/%dx%dx%d/tA=%v,tB=%v/alpha=%v,beta=%v", name, m, n, k, tr[0], tr[1], ab[0], ab[1]), func(t *testing.T) {
						lda, ldb, ldc := k+3, n+1, n+2
						if tr[0] {
							lda = m + 3
						}
						if tr[1] {
							ldb = k + 1
						}
						a := randSlice(r, max(m, k)*lda)
						b := randSlice(r, max(n, k)*ldb)
						c := randSlice(r, m*ldc)
						want := append([]float32(nil), c...)
						if ab[1] == 0 {
							for i := range c {
								c[i] = float32(math.NaN()) // beta=0 must overwrite
							}
						}
						f(tr[0], tr[1], m, n, k, ab[0], a, lda, b, ldb, ab[1], c, ldc)
						naive(tr[0], tr[1], m, n, k, ab[0], a, lda, b, ldb, ab[1], want, ldc)
						for i := 0; i < m; i++ {
							for j := 0; j < n; j++ {
								g, w := c[i*ldc+j], want[i*ldc+j]
								if math.Abs(float64(g-w)) > 1e-4*math.Sqrt(float64(k+1))*(1+math.Abs(float64(w))) {
									t.Fatalf("C[%d,%d] = %v, want %v", i, j, g, w)
								}
							}
						}
					})
				}
			}
		}
	}
}

func TestSgemmBF16(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, s := range [][3]int{{1, 300, 70}, {3, 300, 70}, {8, 301, 64}, {9, 300, 70}, {40, 300, 70}, {2, 7, 5}} {
		m, n, k := s[0], s[1], s[2]
		x := randSlice(r, m*k)
		wf := randSlice(r, n*k)
		w := make([]uint16, n*k)
		for i, v := range wf {
			w[i] = uint16(math.Float32bits(v) >> 16) // truncation is fine: we compare against the widened values
			wf[i] = math.Float32frombits(uint32(w[i]) << 16)
		}
		y := randSlice(r, m*n)
		want := append([]float32(nil), y...)
		SgemmBF16(m, n, k, 1, x, k, w, k, 1, y, n)
		naive(false, true, m, n, k, 1, x, k, wf, k, 1, want, n)
		for i := range y {
			if math.Abs(float64(y[i]-want[i])) > 1e-4*(1+math.Abs(float64(want[i]))) {
				t.Fatalf("m=%d: y[%d] = %v, want %v", m, i, y[i], want[i])
			}
		}
	}
}

// BenchmarkSgemm compares the pure-Go Sgemm, the bf16-weight one and, with
// -tags openblas, OpenBLAS's own sgemm (which Sgemm no longer uses for x·Wᵀ)
// on the model's shapes: x·Wᵀ for prefill (m=128) and decode (m=1, 4),
// Qwen3-0.6B's q/up projections.
func BenchmarkSgemm(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, s := range [][3]int{{128, 1024, 1024}, {128, 3072, 1024}, {1, 3072, 1024}, {4, 3072, 1024}} {
		m, n, k := s[0], s[1], s[2]
		x, w, y := randSlice(r, m*k), randSlice(r, n*k), make([]float32, m*n)
		wb := make([]uint16, n*k)
		for i, v := range w {
			wb[i] = uint16(math.Float32bits(v) >> 16)
		}
		impls := []struct {
			name string
			f    func()
		}{
			{"go", func() { SgemmGo(false, true, m, n, k, 1, x, k, w, k, 0, y, n) }},
			{"bf16", func() { SgemmBF16(m, n, k, 1, x, k, wb, k, 0, y, n) }},
		}
		if Backend != "go" {
			impls = append(impls, struct {
				name string
				f    func()
			}{Backend, func() { backendSgemm(false, true, m, n, k, 1, x, k, w, k, 0, y, n) }})
		}
		for _, impl := range impls {
			b.Run(fmt.Sprintf("%dx%dx%d/%s", m, n, k, impl.name), func(b *testing.B) {
				for b.Loop() {
					impl.f()
				}
				b.ReportMetric(2*float64(m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// TestBatchInvariance checks that a row of C comes out bitwise the same
// whether computed alone or with other rows, and for bf16 weights whether
// the direct (decode) or the widened (prefill) path ran: the model relies on
// it so that a sequence decodes identically alone, in a batch, or when
// scored by a prefill. Sgemm is checked too: with -tags openblas it keeps
// x·Wᵀ on the Go kernels for this reason (OpenBLAS does not promise it).
func TestBatchInvariance(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, s := range [][2]int{{70, 129}, {151, 64}, {13, 8}, {1024, 100}, {9, 3}} {
		n, k := s[0], s[1]
		const m = 13
		a, b := randSlice(r, m*k), randSlice(r, n*k)
		wb := make([]uint16, n*k)
		bw := make([]float32, n*k)
		for i, v := range b {
			wb[i] = uint16(math.Float32bits(v) >> 16)
			bw[i] = math.Float32frombits(uint32(wb[i]) << 16)
		}
		all := make([]float32, m*n)
		SgemmGo(false, true, m, n, k, 1, a, k, b, k, 0, all, n)
		allBF := make([]float32, m*n)
		SgemmBF16(m, n, k, 1, a, k, wb, k, 0, allBF, n) // m > 8: widened panels
		for _, rows := range [][2]int{{0, 1}, {5, 6}, {12, 13}, {0, 4}, {3, 10}, {4, 8}} {
			lo, hi := rows[0], rows[1]
			part := make([]float32, (hi-lo)*n)
			SgemmGo(false, true, hi-lo, n, k, 1, a[lo*k:], k, b, k, 0, part, n)
			partB := make([]float32, (hi-lo)*n)
			Sgemm(false, true, hi-lo, n, k, 1, a[lo*k:], k, b, k, 0, partB, n)
			partBF := make([]float32, (hi-lo)*n)
			SgemmBF16(hi-lo, n, k, 1, a[lo*k:], k, wb, k, 0, partBF, n) // ≤ 8 rows: direct
			for i := range part {
				if part[i] != all[lo*n+i] {
					t.Fatalf("n=%d k=%d rows [%d,%d): C[%d] = %v alone, %v in the full batch", n, k, lo, hi, lo*n+i, part[i], all[lo*n+i])
				}
				if partB[i] != all[lo*n+i] {
					t.Fatalf("%s Sgemm n=%d k=%d rows [%d,%d): C[%d] = %v, SgemmGo on the full batch %v", Backend, n, k, lo, hi, lo*n+i, partB[i], all[lo*n+i])
				}
				if partBF[i] != allBF[lo*n+i] {
					t.Fatalf("bf16 n=%d k=%d rows [%d,%d): C[%d] = %v direct, %v widened", n, k, lo, hi, lo*n+i, partBF[i], allBF[lo*n+i])
				}
			}
		}
	}
}

func TestDotRowsAxpy(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, s := range [][3]int{{1, 1, 1}, {7, 16, 20}, {33, 128, 256}, {5, 13, 13}} {
		n, k, ld := s[0], s[1], s[2]
		x, rows := randSlice(r, k), randSlice(r, n*ld)
		out := make([]float32, n)
		DotRows(out, x, rows, ld)
		want := make([]float32, n)
		naive(false, true, 1, n, k, 1, x, k, rows, ld, 0, want, n)
		sg := make([]float32, n)
		SgemmGo(false, true, 1, n, k, 1, x, k, rows, ld, 0, sg, n)
		for j := range out {
			if math.Abs(float64(out[j]-want[j])) > 1e-4*(1+math.Abs(float64(want[j]))) {
				t.Fatalf("DotRows[%d] = %v, want %v", j, out[j], want[j])
			}
			if out[j] != sg[j] {
				t.Fatalf("DotRows[%d] = %v, Sgemm gives %v: summation order differs", j, out[j], sg[j])
			}
		}
		y := randSlice(r, k)
		yw := append([]float32(nil), y...)
		Axpy(0.5, x, y)
		for i := range y {
			if d := math.Abs(float64(y[i] - (yw[i] + 0.5*x[i]))); d > 1e-6*(1+math.Abs(float64(y[i]))) {
				t.Fatalf("Axpy[%d] = %v, want %v", i, y[i], yw[i]+0.5*x[i])
			}
		}
	}
}

func TestExpShift(t *testing.T) {
	x := make([]float32, 0, 20000)
	for v := -100.0; v <= 0; v += 0.00731 {
		x = append(x, float32(v))
	}
	orig := append([]float32(nil), x...)
	done, sum := ExpShift(x, 0.5)
	if !useAVX2 {
		if done != 0 {
			t.Fatal("vector exp ran without AVX2")
		}
		t.Skip("no AVX2")
	}
	var want float64
	for i := 0; i < done; i++ {
		e := math.Exp(float64(orig[i] - 0.5))
		want += e
		if e > 1e-37 && math.Abs(float64(x[i])-e) > 3e-7*e {
			t.Fatalf("exp(%v) = %g, want %g", orig[i]-0.5, x[i], e)
		}
	}
	if math.Abs(float64(sum)-want) > 1e-5*want {
		t.Errorf("sum %v, want %v", sum, want)
	}
	done2, sum2 := SumExpShift(orig, 0.5)
	if done2 != done || math.Abs(sum2-want) > 1e-6*want {
		t.Errorf("SumExpShift = %d, %v; want %d, %v", done2, sum2, done, want)
	}
}

func TestWeightedRows(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, s := range [][3]int{{1, 8, 8}, {9, 16, 32}, {100, 128, 256}, {5, 44, 50}, {3, 3, 3}, {7, 120, 130}} {
		n, k, ld := s[0], s[1], s[2]
		w, rows := randSlice(r, n), randSlice(r, n*ld)
		out := make([]float32, k)
		WeightedRows(out, w, rows, ld)
		// Each column is summed the same way whichever kernel width covers
		// it: eight columns at a time give the same bits.
		for c := 0; c+8 <= k; c += 8 {
			part := make([]float32, 8)
			WeightedRows(part, w, rows[c:], ld)
			for q, v := range part {
				if math.Float32bits(v) != math.Float32bits(out[c+q]) {
					t.Fatalf("n=%d k=%d: column %d is %v alone, %v in the row", n, k, c+q, v, out[c+q])
				}
			}
		}
		for c := range out {
			var want float64
			for p := range w {
				want += float64(w[p]) * float64(rows[p*ld+c])
			}
			if math.Abs(float64(out[c])-want) > 1e-4*(1+math.Abs(want)) {
				t.Fatalf("n=%d k=%d: out[%d] = %v, want %v", n, k, c, out[c], want)
			}
		}
	}
}

// TestSgemmOuterProductPath covers the shapes the NN and TN products take
// in training (k past one k block, many row blocks, partial edge tiles, the
// LM head's small k) against the float64 reference, and checks that a
// row's result is bitwise the same computed alone or in the batch.
func TestSgemmOuterProductPath(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, s := range [][3]int{{9, 64, 700}, {130, 25, 9}, {70, 50, 600}, {3, 16, 513}, {257, 64, 1}} {
		// slack: B longer than its k rows, so the partial panel reads it
		// in place rather than through a padded copy.
		for _, tc := range []struct {
			transA bool
			slack  int
		}{{false, 0}, {true, 0}, {false, 40}, {true, 40}} {
			transA := tc.transA
			m, n, k := s[0], s[1], s[2]
			t.Run(fmt.Sprintf("%dx%dx%d/tA=%v/slack=%d", m, n, k, transA, tc.slack), func(t *testing.T) {
				lda := k + 3
				if transA {
					lda = m + 3
				}
				ldb, ldc := n+1, n+2
				a := randSlice(r, max(m, k)*lda)
				b := randSlice(r, k*ldb+tc.slack)
				c := randSlice(r, m*ldc)
				want := append([]float32(nil), c...)
				SgemmGo(transA, false, m, n, k, 1, a, lda, b, ldb, 1, c, ldc)
				naive(transA, false, m, n, k, 1, a, lda, b, ldb, 1, want, ldc)
				for i := range m {
					for j := range n {
						g, w := c[i*ldc+j], want[i*ldc+j]
						if math.Abs(float64(g-w)) > 1e-4*math.Sqrt(float64(k+1))*(1+math.Abs(float64(w))) {
							t.Fatalf("C[%d,%d] = %v, want %v", i, j, g, w)
						}
					}
				}
				for _, beta := range []float32{0, 1} {
					c0 := randSlice(r, m*n)
					batch := append([]float32(nil), c0...)
					SgemmGo(transA, false, m, n, k, 1, a, lda, b, ldb, beta, batch, n)
					for _, i := range []int{0, m / 2, m - 1} {
						one := append([]float32(nil), c0[i*n:i*n+n]...)
						ai := a[i*lda:]
						if transA {
							ai = a[i:]
						}
						SgemmGo(transA, false, 1, n, k, 1, ai, lda, b, ldb, beta, one, n)
						for j := range n {
							if math.Float32bits(one[j]) != math.Float32bits(batch[i*n+j]) {
								t.Fatalf("beta %v, row %d col %d: %v alone, %v in the batch", beta, i, j, one[j], batch[i*n+j])
							}
						}
					}
				}
			})
		}
	}
}

// TestWeightedRows4 checks the four-row form bit for bit against
// WeightedRows, on head_dim-like widths with and without a remainder.
func TestWeightedRows4(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, s := range [][2]int{{64, 16}, {1, 16}, {37, 128}, {9, 20}, {5, 7}, {0, 16}} {
		n, k := s[0], s[1]
		ldw, ld, ldo := n+3, k+5, k+2
		w, rows := randSlice(r, 4*ldw), randSlice(r, max(1, n)*ld)
		out := randSlice(r, 4*ldo)
		WeightedRows4(out, ldo, k, w, ldw, n, rows, ld)
		for q := range 4 {
			want := make([]float32, k)
			WeightedRows(want, w[q*ldw:q*ldw+n], rows, ld)
			for c := range k {
				if math.Float32bits(out[q*ldo+c]) != math.Float32bits(want[c]) {
					t.Fatalf("n=%d k=%d: row %d col %d = %v, WeightedRows gives %v", n, k, q, c, out[q*ldo+c], want[c])
				}
			}
		}
	}
}

// TestDotRows4 checks the four-vector form bit for bit against DotRows
// (attention scores of four query rows), on head_dim-like lengths with and
// without a tail past the last multiple of 8, key counts not a multiple of
// the kernel's three.
func TestDotRows4(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	for _, s := range [][2]int{{190, 64}, {1, 64}, {4, 128}, {37, 16}, {9, 20}, {5, 7}, {0, 64}, {64, 3}} {
		n, k := s[0], s[1]
		ldx, ld, ldo := k+3, k+5, n+2
		x, rows := randSlice(r, 4*ldx), randSlice(r, max(1, n)*ld)
		out := randSlice(r, 4*ldo)
		DotRows4(out, ldo, x, ldx, k, n, rows, ld)
		for q := range 4 {
			want := make([]float32, n)
			DotRows(want, x[q*ldx:q*ldx+k], rows, ld)
			for j := range n {
				if math.Float32bits(out[q*ldo+j]) != math.Float32bits(want[j]) {
					t.Fatalf("n=%d k=%d: row %d key %d = %v, DotRows gives %v", n, k, q, j, out[q*ldo+j], want[j])
				}
			}
		}
	}
}

// TestAdamW checks the vector AdamW step bit for bit against the scalar
// formula, over lengths with and without a remainder, several steps.
func TestAdamW(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	for _, n := range []int{1, 8, 37, 1000} {
		p, m, v := randSlice(r, n), make([]float32, n), make([]float32, n)
		wp, wm, wv := append([]float32(nil), p...), make([]float32, n), make([]float32, n)
		for step := 1; step <= 3; step++ {
			g := randSlice(r, n)
			c := AdamWParams{Decay: float32(1 - 1e-3*0.1), Beta1: 0.9, Beta2: 0.98, Eps: 1e-8,
				BC2Sqrt: float32(math.Sqrt(1 - math.Pow(0.98, float64(step)))), Step: float32(1e-3 / (1 - math.Pow(0.9, float64(step))))}
			AdamW(p, g, m, v, c)
			b1, b2 := c.Beta1, c.Beta2
			for j := range wp {
				x := wp[j] * c.Decay
				wm[j] = float32(b1*wm[j]) + float32((1-b1)*g[j])
				wv[j] = float32(b2*wv[j]) + float32(float32((1-b2)*g[j])*g[j])
				denom := float32(math.Sqrt(float64(wv[j])))/c.BC2Sqrt + c.Eps
				wp[j] = x - float32(c.Step*(wm[j]/denom))
			}
			for j := range p {
				if math.Float32bits(p[j]) != math.Float32bits(wp[j]) || m[j] != wm[j] || v[j] != wv[j] {
					t.Fatalf("n=%d step %d [%d]: p %v m %v v %v, scalar %v %v %v", n, step, j, p[j], m[j], v[j], wp[j], wm[j], wv[j])
				}
			}
		}
	}
}

func TestMax(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 20))
	for _, n := range []int{0, 5, 32, 100, 1000} {
		x := randSlice(r, n)
		if n > 40 {
			x[37] = float32(math.NaN())
		}
		want := float32(math.Inf(-1))
		for _, v := range x {
			if v > want {
				want = v
			}
		}
		if got := Max(x, float32(math.Inf(-1))); got != want {
			t.Fatalf("n=%d: Max = %v, want %v", n, got, want)
		}
		if got := Max(x, 100); got != 100 {
			t.Fatalf("n=%d: Max with m=100 = %v", n, got)
		}
	}
}

func TestScale(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, n := range []int{0, 3, 8, 29, 100} {
		x := randSlice(r, n)
		want := append([]float32(nil), x...)
		for i := range want {
			want[i] *= -0.37
		}
		Scale(x, -0.37)
		for i := range x {
			if math.Float32bits(x[i]) != math.Float32bits(want[i]) {
				t.Fatalf("n=%d: x[%d] = %v, want %v", n, i, x[i], want[i])
			}
		}
	}
}

// BenchmarkCrossover times the build's Sgemm against the pure-Go one for
// every product shape the model and the trainer use, over a range of row
// counts m (decode batches of 1–16 sequences up to prefill and training
// chunks): it is how the OpenBLAS build's routing (sgemm_openblas.go) was
// chosen. NT is x·Wᵀ (the forward), NN dy·W and TN dyᵀ·x (the backward),
// at Qwen3-0.6B's 1024→3072 projection.
func BenchmarkCrossover(b *testing.B) {
	r := rand.New(rand.NewPCG(9, 10))
	const n, k = 3072, 1024
	for _, op := range []string{"NT", "NN", "TN"} {
		for _, m := range []int{1, 2, 4, 8, 16, 32, 64, 128, 512} {
			var transA, transB bool
			var ad, bd, ld int // the two operands' sizes and B's stride
			switch op {
			case "NT":
				transB, ad, bd, ld = true, m*k, n*k, k
			case "NN":
				ad, bd, ld = m*k, k*n, n
			case "TN":
				transA, ad, bd, ld = true, k*m, k*n, n
			}
			lda := k
			if transA {
				lda = m
			}
			x, w, y := randSlice(r, ad), randSlice(r, bd), make([]float32, m*n)
			impls := []struct {
				name string
				f    func(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int)
			}{{"go", SgemmGo}}
			if Backend != "go" {
				impls = append(impls, struct {
					name string
					f    func(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int)
				}{Backend, backendSgemm})
			}
			for _, impl := range impls {
				b.Run(fmt.Sprintf("%s/m=%d/%s", op, m, impl.name), func(b *testing.B) {
					for b.Loop() {
						impl.f(transA, transB, m, n, k, 1, x, lda, w, ld, 0, y, n)
					}
					b.ReportMetric(2*float64(m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				})
			}
		}
	}
}

// SwiGLUBackward's vector loop computes the scalar loop's float32
// operations, bitwise, on values around 0, large ones (exp(−|g|) clamped,
// then 0) and signed zeros; the scalar loop here is the one it replaced.
func TestSwiGLUBackwardMatchesScalar(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	const n = 4096 + 13
	gate, up, dy := make([]float32, n), make([]float32, n), make([]float32, n)
	for i := range gate {
		gate[i] = float32(rng.NormFloat64() * 4)
		up[i] = float32(rng.NormFloat64())
		dy[i] = float32(rng.NormFloat64())
	}
	gate[0], gate[1], gate[2], gate[3] = 0, float32(math.Copysign(0, -1)), 100, -100
	dgate, dup := make([]float32, n), make([]float32, n)
	SwiGLUBackward(dgate, dup, dy, gate, up)
	e := make([]float32, n)
	for i, g := range gate {
		e[i] = -float32(math.Abs(float64(g)))
	}
	if done, _ := ExpShift(e[:n&^7], 0); done == 0 {
		for i := range e {
			e[i] = float32(math.Exp(float64(e[i])))
		}
	}
	for i := n &^ 7; i < n && useAVX2; i++ {
		var t [8]float32
		t[0] = e[i]
		expShift8(8, &t[0], 0)
		e[i] = t[0]
	}
	for i, g := range gate {
		s := 1 / (1 + e[i])
		if g < 0 {
			s = e[i] * s
		}
		wup := dy[i] * float32(g*s)
		wg := float32(float32(dy[i]*up[i])*s) * (1 + float32(g*(1-s)))
		if math.Float32bits(dup[i]) != math.Float32bits(wup) || math.Float32bits(dgate[i]) != math.Float32bits(wg) {
			t.Fatalf("element %d (g = %v): dup %v dgate %v, scalar %v %v", i, g, dup[i], dgate[i], wup, wg)
		}
		sig := 1 / (1 + math.Exp(-float64(g)))
		if d := math.Abs(float64(dup[i]) - float64(dy[i])*float64(g)*sig); d > 1e-5*(1+math.Abs(float64(dup[i]))) {
			t.Fatalf("element %d: dup %v, float64 %v", i, dup[i], float64(dy[i])*float64(g)*sig)
		}
	}
}

// SwiGLU is the scalar loop over math.Exp bit for bit: across the range a
// model's gate activations take, near math.Exp's rounding-sensitive
// arguments (multiples of ln 2 / 2, where the reduction's k changes), at
// the |g| ≥ 700 fallback, NaN and ±Inf, and at every length modulo 8.
func TestSwiGLUBitwise(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	var gate []float32
	for range 1 << 16 {
		gate = append(gate, float32(rng.NormFloat64()*4))
	}
	for range 1 << 14 {
		gate = append(gate, float32(rng.NormFloat64()*200))
	}
	for k := -1000; k <= 1000; k++ {
		x := float64(k) * math.Ln2 / 2
		f := float32(x)
		gate = append(gate, f, math.Nextafter32(f, 1e9), math.Nextafter32(f, -1e9))
	}
	for _, v := range []float32{0, -0, 699.99, -699.99, 700, -700, 709, -745, 1e30, -1e30, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 1e-40, -1e-40} {
		gate = append(gate, v, 0.5, -0.5)
	}
	up := make([]float32, len(gate))
	for i := range up {
		up[i] = float32(rng.NormFloat64())
	}
	for _, n := range []int{len(gate), len(gate) - 1, len(gate) - 5, 7, 9, 16, 17} {
		g := gate[len(gate)-n:]
		u := up[len(gate)-n:]
		got := make([]float32, n)
		SwiGLU(got, g, u)
		for i, v := range g {
			want := v / (1 + float32(math.Exp(float64(-v)))) * u[i]
			if math.Float32bits(got[i]) != math.Float32bits(want) && !(math.IsNaN(float64(want)) && math.IsNaN(float64(got[i]))) {
				t.Fatalf("n=%d: SwiGLU(g=%v (%#x), up=%v) = %v (%#x), want %v (%#x)", n, v, math.Float32bits(v), u[i], got[i], math.Float32bits(got[i]), want, math.Float32bits(want))
			}
		}
	}
}

// BenchmarkSwiGLU: the vector path against the scalar loop on one layer's
// gate of the 0.5B student (1,520 tokens × 4,864).
func BenchmarkSwiGLU(b *testing.B) {
	n := 1520 * 4864
	rng := rand.New(rand.NewPCG(1, 2))
	gate, up, out := make([]float32, n), make([]float32, n), make([]float32, n)
	for i := range gate {
		gate[i], up[i] = float32(rng.NormFloat64()*2), float32(rng.NormFloat64())
	}
	b.Run("vector", func(b *testing.B) {
		for range b.N {
			SwiGLU(out, gate, up)
		}
	})
	b.Run("scalar", func(b *testing.B) {
		for range b.N {
			swigluScalar(out, gate, up)
		}
	})
}

// TestPortableKernelsLanes runs the portable kernels (gemmNTRange: the
// 4×4 tiles, the 1×4 strips, the single columns; dotBF16), whatever the
// CPU, and checks that every element is dotLanes's sum bitwise — the
// assembly kernels' order of eight lanes, reduced as they reduce, then the
// tail — over k with and without a tail and across lanesChunk, and that
// the lanes sum closer to the float64 dot product than one chain does.
func TestPortableKernelsLanes(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, s := range [][3]int{{9, 11, 700}, {5, 7, 3}, {4, 4, 256}, {6, 9, 1031}} {
		m, n, k := s[0], s[1], s[2]
		a, b := randSlice(r, m*k), randSlice(r, n*k)
		c := make([]float32, m*n)
		gemmNTRange(m, 0, n, k, 1, a, k, b, k, 0, c, n)
		wb := make([]uint16, n*k)
		for i, v := range b {
			wb[i] = uint16(math.Float32bits(v) >> 16)
		}
		for i := range m {
			for j := range n {
				x, y := a[i*k:(i+1)*k], b[j*k:(j+1)*k]
				if want := dotLanes(x, y); math.Float32bits(c[i*n+j]) != math.Float32bits(want) {
					t.Fatalf("%dx%dx%d C[%d,%d] = %v, dotLanes %v", m, n, k, i, j, c[i*n+j], want)
				}
				yb := make([]float32, k)
				WidenBF16(yb, wb[j*k:(j+1)*k])
				if got, want := dotBF16(x, wb[j*k:(j+1)*k]), dotLanes(x, yb); math.Float32bits(got) != math.Float32bits(want) {
					t.Fatalf("%dx%dx%d dotBF16 row %d col %d = %v, dotLanes on the widened row %v", m, n, k, i, j, got, want)
				}
			}
		}
	}
	// Accuracy: over many long dot products of same-sign terms (the worst
	// case for one chain), the lanes' error from float64 is clearly
	// smaller than the error of one chain in order.
	const k, trials = 4096, 50
	var errLanes, errChain float64
	for range trials {
		x, y := randSlice(r, k), randSlice(r, k)
		var exact float64
		var chain float32
		for p := range x {
			x[p], y[p] = float32(math.Abs(float64(x[p]))), float32(math.Abs(float64(y[p])))
			exact += float64(x[p]) * float64(y[p])
			chain += float32(x[p] * y[p])
		}
		errLanes += math.Abs(float64(dotLanes(x, y))-exact) / exact
		errChain += math.Abs(float64(chain)-exact) / exact
	}
	if errLanes*2 > errChain {
		t.Errorf("mean relative error: lanes %.3g, one chain %.3g; want the lanes at most half", errLanes/trials, errChain/trials)
	}
	t.Logf("k=%d, mean relative error from float64: lanes %.3g, one chain %.3g", k, errLanes/trials, errChain/trials)
}
