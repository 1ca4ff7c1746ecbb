package train

import (
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	"github.com/clawrl/clawrl/blas"
)

// The scalar attention this package had before the tiled one: one query-key
// pair at a time, float64 exponentials, no tiles. Kept as the straightforward
// reference the tiled code is checked against (TestAttentionMatchesReference)
// and timed against (BenchmarkAttention).

// refForEachGroup runs fn for every (segment, kv head) pair, kv heads in
// parallel: each kv head's gradients are written by one goroutine only. fn
// gets a scratch row of the segment's length.
func refForEachGroup(segs []segment, sh attnShape, fn func(s segment, g int, row []float32)) {
	var wg sync.WaitGroup
	for _, s := range segs {
		for g := range sh.kvHeads {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				fn(s, g, make([]float32, s.len))
			}(g)
		}
		// One segment at a time keeps the goroutine count bounded by kvHeads.
		wg.Wait()
	}
}

// refAttentionForward writes out and lse ([T, heads]: log Σ_j exp(s_ij) of each
// query row).
func refAttentionForward(out, lse, q, k, v []float32, segs []segment, sh attnShape) {
	hd := sh.headDim
	qs, ks := sh.heads*hd, sh.kvHeads*hd
	rep := sh.heads / sh.kvHeads
	scale := float32(1 / math.Sqrt(float64(hd)))
	refForEachGroup(segs, sh, func(s segment, g int, row []float32) {
		for h := g * rep; h < (g+1)*rep; h++ {
			for i := range s.len {
				ti := s.start + i
				qi := q[ti*qs+h*hd : ti*qs+h*hd+hd]
				maxv := float32(math.Inf(-1))
				for j := 0; j <= i; j++ {
					tj := s.start + j
					row[j] = blas.Dot(qi, k[tj*ks+g*hd:tj*ks+g*hd+hd]) * scale
					maxv = max(maxv, row[j])
				}
				var sum float32
				for j := 0; j <= i; j++ {
					row[j] = float32(math.Exp(float64(row[j] - maxv)))
					sum += row[j]
				}
				lse[ti*sh.heads+h] = maxv + float32(math.Log(float64(sum)))
				inv := 1 / sum
				o := out[ti*qs+h*hd : ti*qs+h*hd+hd]
				clear(o)
				for j := 0; j <= i; j++ {
					tj := s.start + j
					axpy(row[j]*inv, v[tj*ks+g*hd:tj*ks+g*hd+hd], o)
				}
			}
		}
	})
}

// refAttentionBackward overwrites dq, dk and dv.
//
//	p_ij = exp(s_ij − lse_i)      D_i = dO_i·O_i  (= Σ_j p_ij dP_ij)
//	dP_ij = dO_i·v_j              dS_ij = p_ij (dP_ij − D_i)
//	dq_i += scale Σ_j dS_ij k_j   dk_j += scale dS_ij q_i   dv_j += p_ij dO_i
func refAttentionBackward(dq, dk, dv, dout, lse, q, k, v, out []float32, segs []segment, sh attnShape) {
	hd := sh.headDim
	qs, ks := sh.heads*hd, sh.kvHeads*hd
	rep := sh.heads / sh.kvHeads
	scale := float32(1 / math.Sqrt(float64(hd)))
	for _, s := range segs {
		clear(dq[s.start*qs : (s.start+s.len)*qs])
		clear(dk[s.start*ks : (s.start+s.len)*ks])
		clear(dv[s.start*ks : (s.start+s.len)*ks])
	}
	refForEachGroup(segs, sh, func(s segment, g int, _ []float32) {
		for h := g * rep; h < (g+1)*rep; h++ {
			for i := range s.len {
				ti := s.start + i
				qi := q[ti*qs+h*hd : ti*qs+h*hd+hd]
				doi := dout[ti*qs+h*hd : ti*qs+h*hd+hd]
				D := blas.Dot(doi, out[ti*qs+h*hd:ti*qs+h*hd+hd])
				l := lse[ti*sh.heads+h]
				dqi := dq[ti*qs+h*hd : ti*qs+h*hd+hd]
				for j := 0; j <= i; j++ {
					tj := s.start + j
					kj := k[tj*ks+g*hd : tj*ks+g*hd+hd]
					vj := v[tj*ks+g*hd : tj*ks+g*hd+hd]
					p := float32(math.Exp(float64(blas.Dot(qi, kj)*scale - l)))
					axpy(p, doi, dv[tj*ks+g*hd:tj*ks+g*hd+hd])
					ds := p * (blas.Dot(doi, vj) - D) * scale
					if ds == 0 {
						continue
					}
					axpy(ds, kj, dqi)
					axpy(ds, qi, dk[tj*ks+g*hd:tj*ks+g*hd+hd])
				}
			}
		}
	})
}

// attnCase is random attention inputs for a segment layout and shape.
type attnCase struct {
	segs          []segment
	sh            attnShape
	q, k, v, dout []float32
}

func newAttnCase(lens []int, sh attnShape, seed uint64) *attnCase {
	c := &attnCase{sh: sh}
	T := 0
	for _, l := range lens {
		c.segs = append(c.segs, segment{T, l})
		T += l
	}
	r := rand.New(rand.NewPCG(seed, 1))
	fill := func(n int, s float64) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64() * s)
		}
		return x
	}
	qs, ks := sh.heads*sh.headDim, sh.kvHeads*sh.headDim
	// Scores of a few units: peaked enough that the running maximum moves
	// from key block to key block, flat enough that many keys count.
	c.q, c.k = fill(T*qs, 1.5), fill(T*ks, 1.5)
	c.v, c.dout = fill(T*ks, 1), fill(T*qs, 1)
	return c
}

type attnResult struct{ out, lse, dq, dk, dv []float32 }

func (c *attnCase) run(fwd func(out, lse, q, k, v []float32, segs []segment, sh attnShape),
	bwd func(dq, dk, dv, dout, lse, q, k, v, out []float32, segs []segment, sh attnShape)) attnResult {
	T := len(c.q) / (c.sh.heads * c.sh.headDim)
	r := attnResult{
		out: make([]float32, len(c.q)), lse: make([]float32, T*c.sh.heads),
		dq: make([]float32, len(c.q)), dk: make([]float32, len(c.k)), dv: make([]float32, len(c.v)),
	}
	// NaN-filled outputs: anything the code forgets to write shows.
	for _, x := range [][]float32{r.out, r.lse, r.dq, r.dk, r.dv} {
		for i := range x {
			x[i] = float32(math.NaN())
		}
	}
	fwd(r.out, r.lse, c.q, c.k, c.v, c.segs, c.sh)
	bwd(r.dq, r.dk, r.dv, c.dout, r.lse, c.q, c.k, c.v, r.out, c.segs, c.sh)
	return r
}

// relErr is max_i |got_i − want_i| / max(max_i |want_i|, 1). The floor of 1
// (inputs and gradients here are of order 1) keeps tensors that are exactly
// zero in exact arithmetic, such as a one-token segment's dq and dk, from
// dividing rounding noise by rounding noise.
func relErr(got, want []float32) float64 {
	var diff, norm float64
	for i := range want {
		diff = max(diff, math.Abs(float64(got[i])-float64(want[i])))
		norm = max(norm, math.Abs(float64(want[i])))
		if math.IsNaN(float64(got[i])) {
			return math.Inf(1)
		}
	}
	return diff / max(norm, 1)
}

func TestAttentionMatchesReference(t *testing.T) {
	cases := []struct {
		name string
		lens []int
		sh   attnShape
	}{
		{"one token", []int{1}, attnShape{4, 2, 16}},
		{"short", []int{7}, attnShape{4, 2, 16}},
		{"block-1", []int{63}, attnShape{4, 2, 16}},
		{"block", []int{64}, attnShape{4, 2, 16}},
		{"block+1", []int{65}, attnShape{4, 2, 16}},
		{"long", []int{300}, attnShape{4, 2, 16}},
		{"packed rep2", []int{1, 7, 63, 64, 65, 300}, attnShape{4, 2, 16}},
		{"packed rep1", []int{65, 1, 300, 7, 64, 63}, attnShape{2, 2, 16}},
		{"rep4 head_dim 12 (vector tails)", []int{130, 5, 77}, attnShape{4, 1, 12}},
		{"head_dim 128", []int{200, 64}, attnShape{2, 1, 128}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newAttnCase(tc.lens, tc.sh, uint64(i))
			want := c.run(refAttentionForward, refAttentionBackward)
			got := c.run(attentionForward, attentionBackward)
			for _, x := range []struct {
				name      string
				got, want []float32
			}{
				{"out", got.out, want.out}, {"lse", got.lse, want.lse},
				{"dq", got.dq, want.dq}, {"dk", got.dk, want.dk}, {"dv", got.dv, want.dv},
			} {
				e := relErr(x.got, x.want)
				if e > 1e-5 {
					t.Errorf("%s: relative error %.3g > 1e-5", x.name, e)
				}
				t.Logf("%s: relative error %.2g", x.name, e)
			}
		})
	}
}

// The tiled attention's results must not depend on how its work is spread
// over goroutines: one worker and many give the same bits.
func TestAttentionDeterministic(t *testing.T) {
	c := newAttnCase([]int{300, 7, 130, 64}, attnShape{4, 2, 16}, 3)
	prev := runtime.GOMAXPROCS(1)
	serial := c.run(attentionForward, attentionBackward)
	runtime.GOMAXPROCS(max(prev, 4))
	parallel := c.run(attentionForward, attentionBackward)
	runtime.GOMAXPROCS(prev)
	for _, x := range []struct {
		name string
		a, b []float32
	}{
		{"out", serial.out, parallel.out}, {"lse", serial.lse, parallel.lse},
		{"dq", serial.dq, parallel.dq}, {"dk", serial.dk, parallel.dk}, {"dv", serial.dv, parallel.dv},
	} {
		for i := range x.a {
			if math.Float32bits(x.a[i]) != math.Float32bits(x.b[i]) {
				t.Fatalf("%s[%d]: %v with one worker, %v with several", x.name, i, x.a[i], x.b[i])
			}
		}
	}
}
