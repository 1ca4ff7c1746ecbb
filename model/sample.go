package model

import (
	"math"
	"math/rand/v2"
	"sort"
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
// top-p (the order transformers' logits processors apply them).
func sampleFiltered(logits []float32, p SamplingParams, rng *rand.Rand) int {
	invT := 1 / p.Temperature
	type cand struct {
		id int
		l  float64
	}
	k := len(logits)
	if p.TopK > 0 && p.TopK < k {
		k = p.TopK
	}
	var cands []cand
	if k < len(logits) || (p.TopP > 0 && p.TopP < 1) {
		// Sorting 150k logits per token is slow; a partial selection of the
		// top k (or of a generous prefix for top-p) is enough.
		cands = make([]cand, len(logits))
		for i, l := range logits {
			cands[i] = cand{i, float64(l) * invT}
		}
		sort.Slice(cands, func(a, b int) bool {
			if cands[a].l != cands[b].l {
				return cands[a].l > cands[b].l
			}
			return cands[a].id < cands[b].id
		})
		cands = cands[:k]
	} else {
		cands = make([]cand, len(logits))
		for i, l := range logits {
			cands[i] = cand{i, float64(l) * invT}
		}
	}
	maxl := math.Inf(-1)
	for _, c := range cands {
		maxl = math.Max(maxl, c.l)
	}
	probs := make([]float64, len(cands))
	var sum float64
	for i, c := range cands {
		probs[i] = math.Exp(c.l - maxl)
		sum += probs[i]
	}
	n := len(cands)
	if p.TopP > 0 && p.TopP < 1 {
		// Keep the smallest prefix (by descending probability) whose mass
		// reaches top_p, always at least one token.
		var acc float64
		for i := range probs {
			acc += probs[i] / sum
			if acc >= p.TopP {
				n = i + 1
				break
			}
		}
		sum = 0
		for _, q := range probs[:n] {
			sum += q
		}
	}
	u := rng.Float64() * sum
	for i := 0; i < n; i++ {
		u -= probs[i]
		if u < 0 {
			return cands[i].id
		}
	}
	return cands[n-1].id
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

// LogSumExp is log Σ exp(x), computed stably in float64.
func LogSumExp(x []float32) float32 {
	maxv := float32(math.Inf(-1))
	for _, v := range x {
		maxv = max(maxv, v)
	}
	var s float64
	for _, v := range x {
		s += math.Exp(float64(v - maxv))
	}
	return maxv + float32(math.Log(s))
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
