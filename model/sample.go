package model

import (
	"math"
	"math/rand/v2"
	"sort"

	"github.com/clawrl/clawrl/blas"
)

// SamplingParams choose how the next token is drawn from the logits.
type SamplingParams struct {
	Temperature float64 // 0 = greedy (argmax)
	TopP        float64 // nucleus mass to keep; 0 or ≥ 1 = off
	TopK        int     // keep the k most likely; 0 = off
}

// TokenLogprob is a token id with its logprob.
type TokenLogprob struct {
	ID      int32
	Logprob float32
}

// Sample draws the next token from logits and returns it with its logprob.
//
// The logprob is always the log-softmax of the raw logits — before
// temperature, top-k and top-p reshape the sampling distribution — because
// that is π(token | context) as the trainer recomputes it with a forward
// pass; reporting the reshaped probability would make every importance
// ratio wrong. Greedy (Temperature 0) takes the first argmax and needs no rng.
func Sample(logits []float32, p SamplingParams, rng *rand.Rand) (int32, float32) {
	lse := LogSumExp(logits)
	if p.Temperature <= 0 || rng == nil {
		id := argmax(logits)
		return int32(id), logits[id] - lse
	}
	id := sampleFiltered(logits, p, rng)
	return int32(id), logits[id] - lse
}

// sampleFiltered draws from softmax(logits/T) restricted by top-k, then
// top-p (the order transformers' logits processors apply them). It never
// sorts the whole vocabulary: top-k keeps a small heap, and top-p sorts only
// the tokens above a probability threshold that is lowered until they hold
// at least top_p of the mass (a superset of the nucleus, so the nucleus
// taken from it is exact).
func sampleFiltered(logits []float32, p SamplingParams, rng *rand.Rand) int {
	invT := 1 / p.Temperature
	var ids []int32
	if p.TopK > 0 && p.TopK < len(logits) {
		top := TopLogprobs(logits, p.TopK) // ordered by logit; the shift does not matter
		ids = make([]int32, len(top))
		for i, t := range top {
			ids[i] = t.ID
		}
	}
	at := func(i int) int {
		if ids != nil {
			return int(ids[i])
		}
		return i
	}
	n := len(logits)
	if ids != nil {
		n = len(ids)
	}
	maxl := math.Inf(-1)
	for i := 0; i < n; i++ {
		if v := float64(logits[at(i)]) * invT; v > maxl {
			maxl = v
		}
	}
	// Unnormalised probabilities, computed once.
	w := make([]float32, n)
	for i := range w {
		w[i] = float32(float64(logits[at(i)])*invT - maxl)
	}
	done, _ := blas.ExpShift(w, 0)
	for i := done; i < n; i++ {
		w[i] = expf(w[i])
	}
	var total float64
	for _, v := range w {
		total += float64(v)
	}
	weight := func(i int) float64 { return float64(w[i]) }
	type cand struct {
		id int
		w  float64
	}
	var cands []cand
	if p.TopP > 0 && p.TopP < 1 {
		for thr := 1.0 / 16; ; thr /= 16 {
			cands = cands[:0]
			var mass float64
			for i := 0; i < n; i++ {
				if wi := weight(i); wi >= thr {
					cands = append(cands, cand{at(i), wi})
					mass += wi
				}
			}
			if mass >= p.TopP*total || thr < 1e-45 {
				break
			}
		}
		sort.Slice(cands, func(a, b int) bool {
			if cands[a].w != cands[b].w {
				return cands[a].w > cands[b].w
			}
			return cands[a].id < cands[b].id
		})
		var acc float64
		for i, c := range cands {
			acc += c.w
			if acc >= p.TopP*total {
				cands = cands[:i+1]
				break
			}
		}
		total = acc
	} else {
		// No nucleus: draw straight from the weights.
		u := rng.Float64() * total
		for i, v := range w {
			u -= float64(v)
			if u < 0 {
				return at(i)
			}
		}
		return at(n - 1)
	}
	u := rng.Float64() * total
	for _, c := range cands {
		u -= c.w
		if u < 0 {
			return c.id
		}
	}
	return cands[len(cands)-1].id
}

func argmax(x []float32) int {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}

// LogSumExp is log Σ exp(x), shifted by the maximum for stability and
// summed in float64 (vector exponentials where the CPU has AVX2).
func LogSumExp(x []float32) float32 {
	maxv := float32(math.Inf(-1))
	for _, v := range x {
		if v > maxv || v != v {
			maxv = v
		}
	}
	if math.IsInf(float64(maxv), 0) || maxv != maxv {
		return maxv
	}
	done, s := blas.SumExpShift(x, maxv)
	for _, v := range x[done:] {
		s += float64(expf(v - maxv))
	}
	return maxv + float32(math.Log(s))
}

// expf is exp for float32 arguments, accurate to about one float32 ulp
// (Cephes' expf: range reduction by ln 2 split in two, degree-6
// polynomial). A vocabulary-wide softmax calls it 150k times per token,
// where math.Exp's float64 accuracy is wasted time.
func expf(x float32) float32 {
	switch {
	case x > 88.72283:
		return float32(math.Inf(1))
	case x < -103.97208:
		return 0
	case x != x:
		return x
	}
	// Each product is rounded on its own (the float32 conversions), as
	// the default build computes it: with GOAMD64=v3 Go could otherwise
	// fuse some of them into FMAs and change the last bit.
	n := float32(math.Floor(float64(float32(x*1.44269504088896341) + 0.5)))
	r := x - float32(n*0.693359375) + float32(n*2.12194440e-4)
	z := r * r
	y := float32(1.9875691500e-4*r) + 1.3981999507e-3
	y = float32(y*r) + 8.3334519073e-3
	y = float32(y*r) + 4.1665795894e-2
	y = float32(y*r) + 1.6666665459e-1
	y = float32(y*r) + 5.0000001201e-1
	y = float32(y*z) + r + 1
	// Scale by 2^n in two steps so subnormal results stay right.
	ni := int32(n)
	if ni > 127 {
		y *= 2
		ni--
	}
	if ni < -126 {
		y *= math.Float32frombits(uint32(ni+127+64) << 23)
		return y * math.Float32frombits(uint32(127-64)<<23)
	}
	return y * math.Float32frombits(uint32(ni+127)<<23)
}

// LogSoftmax writes log-softmax(logits) into dst (which may alias logits).
func LogSoftmax(dst, logits []float32) {
	lse := LogSumExp(logits)
	dst = dst[:len(logits)]
	for i, v := range logits {
		dst[i] = v - lse
	}
}

// TopLogprobs returns the n most likely tokens under log-softmax(logits),
// most likely first (ties by lower id).
func TopLogprobs(logits []float32, n int) []TokenLogprob {
	if n <= 0 {
		return nil
	}
	n = min(n, len(logits))
	lse := LogSumExp(logits)
	top := make([]TokenLogprob, 0, n+1)
	for i, v := range logits {
		if len(top) == n && v <= top[n-1].Logprob {
			continue
		}
		j := len(top)
		top = append(top, TokenLogprob{})
		for j > 0 && top[j-1].Logprob < v {
			top[j] = top[j-1]
			j--
		}
		top[j] = TokenLogprob{ID: int32(i), Logprob: v}
		if len(top) > n {
			top = top[:n]
		}
	}
	for i := range top {
		top[i].Logprob -= lse
	}
	return top
}
