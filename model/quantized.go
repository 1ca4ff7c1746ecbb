package model

import (
	"fmt"

	"github.com/clawrl/clawrl/quant"
)

// NewQuantLinear wraps a GGUF tensor's raw blocks ([out, in], type t) as a
// Linear whose weight stays quantized. raw is kept, not copied: a caller
// that maps a file keeps the mapping open for the model's lifetime.
func NewQuantLinear(t quant.Type, out, in int, raw []byte) (Linear, error) {
	q, err := quant.NewMatrix(t, out, in, raw)
	if err != nil {
		return Linear{}, err
	}
	return Linear{Out: out, In: in, Q: q}, nil
}

// Quantize replaces the layer's weight by blocks of t, made by quant's
// reference quantizer (tests and benchmarks: real files carry llama.cpp's
// own blocks). Layers whose rows are not whole blocks of t fall back to
// Q8_0, as llama.cpp's quantize does for K-quants.
func (l *Linear) Quantize(t quant.Type) error {
	w := l.Dequantized()
	if w == nil {
		return fmt.Errorf("quantize [%d, %d] layer: no weight", l.Out, l.In)
	}
	if _, err := t.RowBytes(l.In); err != nil {
		t = quant.Q8_0
	}
	rb, err := t.RowBytes(l.In)
	if err != nil {
		return fmt.Errorf("quantize [%d, %d] layer: %w", l.Out, l.In, err)
	}
	data := make([]byte, l.Out*rb)
	for r := 0; r < l.Out; r++ {
		quant.QuantizeRow(t, data[r*rb:(r+1)*rb], w[r*l.In:(r+1)*l.In])
	}
	q, err := quant.NewMatrix(t, l.Out, l.In, data)
	if err != nil {
		return err
	}
	l.W, l.WBF16, l.Q = nil, nil, q
	return nil
}

// Quantize converts every linear and the embedding to quantized blocks:
// the embedding (and a tied head) to embed, the blocks' linears to t.
func (w *Weights) Quantize(t, embed quant.Type) error {
	if err := w.Embed.Quantize(embed); err != nil {
		return fmt.Errorf("embedding: %w", err)
	}
	if w.LMHead != &w.Embed {
		if err := w.LMHead.Quantize(embed); err != nil {
			return fmt.Errorf("lm_head: %w", err)
		}
	}
	for i := range w.Blocks {
		for mod := range numModules {
			if err := w.Blocks[i].linear(mod).Quantize(t); err != nil {
				return fmt.Errorf("layer %d %s: %w", i, moduleNames[mod], err)
			}
		}
	}
	return nil
}

// Quantized reports whether the linear weights are kept as quantized blocks.
func (w *Weights) Quantized() bool { return w.Embed.Q != nil }
