package model

import (
	"fmt"

	"github.com/clawrl/clawrl/blas"
)

// embeddingForward copies the embedding row of each id into out[T, C].
func embeddingForward(out []float32, ids []int32, wte *Linear) error {
	C := wte.In
	for t, id := range ids {
		if id < 0 || int(id) >= wte.Out {
			return fmt.Errorf("token id %d at position %d is outside the vocabulary (%d)", id, t, wte.Out)
		}
		dst := out[t*C : (t+1)*C]
		switch {
		case wte.Q != nil:
			wte.Q.DequantizeRows(dst, int(id), int(id)+1)
		case wte.WBF16 != nil:
			blas.WidenBF16(dst, wte.WBF16[int(id)*C:(int(id)+1)*C])
		default:
			copy(dst, wte.W[int(id)*C:(int(id)+1)*C])
		}
	}
	return nil
}

// lmheadForward computes logits[T, V] = x[T, C]·Wᵀ, the output projection
// (the embedding matrix itself when tie_word_embeddings is set).
func lmheadForward(logits, x []float32, head *Linear, T int) {
	matmulForward(logits, x, head, T)
}
