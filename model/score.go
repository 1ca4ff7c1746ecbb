package model

import (
	"context"
	"fmt"
)

// Score returns log π(completion[i] | prompt, completion[:i]) for every
// completion token, from one prefill of prompt+completion under adapter
// (nil = base weights): the log-softmax of the raw logits, the same quantity
// Sample reports. Logits exist only a few rows at a time, so scoring long
// completions over a large vocabulary stays within a few megabytes.
func (m *Model) Score(ctx context.Context, prompt, completion []int32, adapter *Adapter) ([]float32, error) {
	if len(prompt) == 0 {
		return nil, fmt.Errorf("score: empty prompt")
	}
	if len(completion) == 0 {
		return []float32{}, nil
	}
	all := make([]int32, 0, len(prompt)+len(completion))
	all = append(append(all, prompt...), completion...)
	H, V := m.Config.HiddenSize, m.Config.VocabSize
	out := make([]float32, len(completion))
	logits := make([]float32, logitsChunk*V)
	// Position t's logits predict token t+1; the first completion token is
	// predicted at position len(prompt)-1.
	first := len(prompt) - 1
	err := m.extend(ctx, m.NewSequence(), all[:len(all)-1], adapter, func(start int, hidden []float32) {
		rows := len(hidden) / H
		lo := max(first, start)
		for t := lo; t < start+rows; t += logitsChunk {
			n := min(logitsChunk, start+rows-t)
			lmheadForward(logits, hidden[(t-start)*H:], m.Weights.LMHead, n)
			for i := 0; i < n; i++ {
				row := logits[i*V : (i+1)*V]
				out[t+i-first] = row[all[t+i+1]] - LogSumExp(row)
			}
		}
	})
	if err != nil {
		return nil, fmt.Errorf("score: %w", err)
	}
	return out, nil
}
