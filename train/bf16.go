package train

import (
	"fmt"

	"github.com/clawrl/clawrl/blas"
	"github.com/clawrl/clawrl/quant"
)

// Precision is the arithmetic of the backward's products through frozen
// base weights (dx = dy·W for each projection, dh = dz·W for the LM head).
// The forward, LoRA's own products and every trained weight's gradient are
// float32 either way: π_old is still the serving forward's, bit for bit.
type Precision string

const (
	// PrecisionFP32: float32 products, as torch computes them in float32.
	PrecisionFP32 Precision = "fp32"
	// PrecisionBF16: dy (or dz) and W rounded to bfloat16 (nearest even),
	// products summed in float32 (blas.GemmBF16; VDPBF16PS on CPUs with
	// AVX512_BF16, AMX tiles on those with AMX-BF16), as torch's autocast to
	// bf16 computes its matmuls. Each frozen weight is packed once, 2 bytes
	// a parameter kept for the trainer's life.
	PrecisionBF16 Precision = "bf16"
)

// DefaultPrecision is the backward's precision when Config.Precision is
// unset: bf16 where blas has a bf16 kernel (VDPBF16PS, AMX tiles, or AVX2 +
// FMA, which computes VDPBF16PS's bits: every x86-64 CPU since 2013–2015
// trains alike, AMX tiles apart), float32 elsewhere (blas's Go fallback
// computes the same bf16 sums far slower than its float32 kernels).
func DefaultPrecision() Precision {
	if blas.HasBF16Kernel() {
		return PrecisionBF16
	}
	return PrecisionFP32
}

// ParsePrecision reads a --train-precision value: fp32, bf16, or auto (or
// empty) for DefaultPrecision.
func ParsePrecision(s string) (Precision, error) {
	switch s {
	case "", "auto":
		return DefaultPrecision(), nil
	case string(PrecisionFP32), string(PrecisionBF16):
		return Precision(s), nil
	}
	return "", fmt.Errorf("train precision %q: want fp32, bf16 or auto", s)
}

// bf16Packs holds each frozen weight's bf16 pack, made on first use. The
// base weights never change while a trainer runs (LoRA and QLoRA freeze
// them; weights that train have gradients and keep the float32 path).
type bf16Packs struct {
	m     map[any]*blas.BF16Pack
	bytes int64
	tile  []float32 // float32 rows of a quantized weight on their way to a pack
}

// widenTile bounds the float32 rows a quantized weight is widened through:
// packed a piece at a time, a frozen base never exists whole in float32
// (at Qwen2.5-1.5B's shape the pieces save 6 GB of memory touched once).
const widenTile = 1 << 18

// quantized packs q's rows (k = q.Rows, n = q.Cols) a piece at a time.
func (b *bf16Packs) quantized(q *quant.Matrix) *blas.BF16Pack {
	p := blas.NewBF16Pack(q.Rows, q.Cols)
	rows := max(2, widenTile/q.Cols&^1)
	b.tile = grow(b.tile, min(rows, q.Rows)*q.Cols)
	for r0 := 0; r0 < q.Rows; r0 += rows {
		r1 := min(r0+rows, q.Rows)
		dequantizeRows(b.tile, q, r0, r1)
		p.PackRows(b.tile, q.Cols, r0, r1)
	}
	return p
}

// linear is l's pack (W as the k×n operand of dx = dy·W: k = Out, n = In),
// or nil when l's base trains. A quantized W is widened once for packing.
func (b *bf16Packs) linear(l *Linear) *blas.BF16Pack {
	if b == nil || (l.W != nil && l.W.Grad != nil) {
		return nil
	}
	if p := b.m[l]; p != nil {
		return p
	}
	if l.Q != nil {
		return b.put(l, b.quantized(l.Q))
	}
	return b.put(l, blas.PackBF16(l.W.Data, l.In, l.Out, l.In))
}

// head is the LM head's pack (k = Vocab, n = Hidden), or nil when it trains.
func (b *bf16Packs) head(w *Weights) *blas.BF16Pack {
	lm := w.lmWeight()
	if b == nil || lm.Grad != nil {
		return nil
	}
	if p := b.m[lm]; p != nil {
		return p
	}
	if q := w.lmQ(); q != nil {
		return b.put(lm, b.quantized(q))
	}
	D, V := w.Arch.Hidden, w.Arch.Vocab
	return b.put(lm, blas.PackBF16(lm.Data, D, V, D))
}

func (b *bf16Packs) put(key any, p *blas.BF16Pack) *blas.BF16Pack {
	if b.m == nil {
		b.m = map[any]*blas.BF16Pack{}
	}
	b.m[key] = p
	b.bytes += p.Bytes()
	return p
}
