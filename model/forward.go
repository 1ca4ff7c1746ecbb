package model

import (
	"context"
	"fmt"

	"github.com/clawrl/clawrl/blas"
	"github.com/clawrl/clawrl/quant"
)

// batchRow is one token being run through the model: which sequence it
// extends, at which position, under which adapter (nil = base weights).
type batchRow struct {
	seq     *Sequence
	pos     int
	adapter *Adapter
}

// activations are the buffers of one forward call over N rows.
type activations struct {
	x       []float32 // residual stream [N, H]
	xn      []float32 // normalised input of the current sublayer [N, H]
	q       []float32 // [N, heads·head_dim]
	k, v    []float32 // [N, kv_heads·head_dim]
	att     []float32 // attention output [N, heads·head_dim]
	tmp     []float32 // sublayer output before the residual add [N, H]
	gate    []float32 // [N, I]
	up      []float32 // [N, I]
	swiglu  []float32 // [N, I]
	spans   [numModules][]loraSpan
	adapted bool
}

func (m *Model) newActivations(N int) *activations {
	c := m.Config
	H, I := c.HiddenSize, c.IntermediateSize
	return &activations{
		x: make([]float32, N*H), xn: make([]float32, N*H), tmp: make([]float32, N*H),
		q: make([]float32, N*c.QDim()), att: make([]float32, N*c.QDim()),
		k: make([]float32, N*c.KVDim()), v: make([]float32, N*c.KVDim()),
		gate: make([]float32, N*I), up: make([]float32, N*I), swiglu: make([]float32, N*I),
	}
}

// linearForward is the base matmul plus, for rows whose adapter adapts this
// module, their LoRA update.
func (m *Model) linearForward(out, inp []float32, l *Linear, a *activations, rows []batchRow, layer int, mod Module) {
	matmulForward(out, inp, l, len(rows))
	m.loraAdd(out, inp, l, a, rows, layer, mod)
}

// sharedLinear is one of several layers that read the same input.
type sharedLinear struct {
	out []float32
	l   *Linear
	mod Module
}

// linearsForward is linearForward for layers that share their input (q, k,
// v; gate, up): on quantized weights they run as one MatMulShared (the
// input quantized once, one parallel region), with equal results.
func (m *Model) linearsForward(ls []sharedLinear, inp []float32, a *activations, rows []batchRow, layer int) {
	N := len(rows)
	ms := make([]*quant.Matrix, 0, len(ls))
	outs := make([][]float32, 0, len(ls))
	for _, s := range ls {
		if s.l.Q == nil {
			ms = nil
			break
		}
		ms = append(ms, s.l.Q)
		outs = append(outs, s.out[:N*s.l.Out])
	}
	if ms == nil {
		for _, s := range ls {
			m.linearForward(s.out, inp, s.l, a, rows, layer, s.mod)
		}
		return
	}
	quant.MatMulShared(outs, inp, N, ms)
	for _, s := range ls {
		addBias(s.out, s.l, N)
		m.loraAdd(s.out, inp, s.l, a, rows, layer, s.mod)
	}
}

// loraAdd adds, for rows whose adapter adapts this module, their LoRA
// update to out.
func (m *Model) loraAdd(out, inp []float32, l *Linear, a *activations, rows []batchRow, layer int, mod Module) {
	N := len(rows)
	if !a.adapted {
		return
	}
	spans := a.spans[mod][:0]
	for lo := 0; lo < N; {
		hi := lo + 1
		for hi < N && rows[hi].adapter == rows[lo].adapter {
			hi++
		}
		if ad := rows[lo].adapter; ad != nil {
			if lora := ad.Layers[layer][mod]; lora != nil {
				spans = append(spans, loraSpan{lo: lo, hi: hi, lora: lora})
			}
		}
		lo = hi
	}
	a.spans[mod] = spans
	loraForward(out, inp, spans, l.In, l.Out)
}

// forward runs ids (one per row) through every layer, storing each row's key
// and value in its sequence's cache at its position, and returns the final
// normalised hidden states [N, H]. Rows of one sequence must be in position
// order; a row sees its sequence's cache up to and including its position.
func (m *Model) forward(ctx context.Context, ids []int32, rows []batchRow) ([]float32, error) {
	c := m.Config
	N := len(rows)
	H, I := c.HiddenSize, c.IntermediateSize
	nH, nKV, hd := c.NumAttentionHeads, c.NumKeyValueHeads, c.HeadDim
	kvDim := c.KVDim()
	eps := float32(c.RMSNormEps)
	w := m.Weights

	a := m.newActivations(N)
	for _, r := range rows {
		if r.adapter != nil {
			if len(r.adapter.Layers) != c.NumHiddenLayers {
				return nil, fmt.Errorf("adapter has %d layers, model has %d", len(r.adapter.Layers), c.NumHiddenLayers)
			}
			a.adapted = true
		}
	}
	if err := embeddingForward(a.x, ids, &w.Embed); err != nil {
		return nil, err
	}
	pos := make([]int, N)
	for i, r := range rows {
		pos[i] = r.pos
	}
	rt := NewRopeTable(m.invFreq, pos)

	for l := range w.Blocks {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b := &w.Blocks[l]
		// Attention sublayer.
		rmsnormForward(a.xn, nil, a.x, b.InputNorm, N, H, eps)
		m.linearsForward([]sharedLinear{{a.q, &b.Q, ModQ}, {a.k, &b.K, ModK}, {a.v, &b.V, ModV}}, a.xn, a, rows, l)
		if c.QKNorm() {
			rmsnormForward(a.q, nil, a.q, b.QNorm, N*nH, hd, eps)
			rmsnormForward(a.k, nil, a.k, b.KNorm, N*nKV, hd, eps)
		}
		rt.Apply(a.q, N, nH)
		rt.Apply(a.k, N, nKV)
		for i, r := range rows {
			r.seq.layers[l].store(r.pos, kvDim, a.k[i*kvDim:(i+1)*kvDim], a.v[i*kvDim:(i+1)*kvDim])
		}
		attentionForward(a.att, a.q, rows, l, nH, nKV, hd)
		m.linearForward(a.tmp, a.att, &b.O, a, rows, l, ModO)
		residualForward(a.x, a.tmp)
		// MLP sublayer.
		rmsnormForward(a.xn, nil, a.x, b.PostAttnNorm, N, H, eps)
		m.linearsForward([]sharedLinear{{a.gate, &b.Gate, ModGate}, {a.up, &b.Up, ModUp}}, a.xn, a, rows, l)
		blas.SwiGLU(a.swiglu[:N*I], a.gate, a.up)
		m.linearForward(a.tmp, a.swiglu, &b.Down, a, rows, l, ModDown)
		residualForward(a.x, a.tmp)
	}
	rmsnormForward(a.xn, nil, a.x, w.FinalNorm, N, H, eps)
	return a.xn, nil
}

// logitsChunk bounds how many rows' logits exist at once when scoring (a
// Qwen vocabulary row is 600 KB).
const logitsChunk = 32

// prefillChunk bounds the rows of one forward call in Prefill, so activation
// memory stays bounded for long prompts.
const prefillChunk = 512

// extend appends ids to seq under adapter, in chunks, and calls onHidden
// with each chunk's final hidden states and the index of its first token.
func (m *Model) extend(ctx context.Context, seq *Sequence, ids []int32, adapter *Adapter, onHidden func(first int, hidden []float32)) error {
	if seq.maxLen > 0 && seq.n+len(ids) > seq.maxLen {
		return fmt.Errorf("sequence of %d tokens plus %d exceeds max_position_embeddings %d", seq.n, len(ids), seq.maxLen)
	}
	seq.reserve(len(ids))
	for first := 0; first < len(ids); first += prefillChunk {
		chunk := ids[first:min(first+prefillChunk, len(ids))]
		rows := make([]batchRow, len(chunk))
		for i := range rows {
			rows[i] = batchRow{seq: seq, pos: seq.n + i, adapter: adapter}
		}
		hidden, err := m.forward(ctx, chunk, rows)
		if err != nil {
			seq.Truncate(seq.n) // drop any half-written positions
			return err
		}
		seq.n += len(chunk)
		seq.ids = append(seq.ids, chunk...)
		if onHidden != nil {
			onHidden(first, hidden)
		}
	}
	return nil
}

// Prefill appends ids to seq (one batched forward per chunk of the prompt)
// and returns the logits after the last one, [vocab]. adapter nil runs the
// base weights.
func (m *Model) Prefill(ctx context.Context, seq *Sequence, ids []int32, adapter *Adapter) ([]float32, error) {
	if len(ids) == 0 {
		return nil, fmt.Errorf("prefill: no tokens")
	}
	H := m.Config.HiddenSize
	logits := make([]float32, m.Config.VocabSize)
	err := m.extend(ctx, seq, ids, adapter, func(first int, hidden []float32) {
		if first+len(hidden)/H == len(ids) {
			last := hidden[len(hidden)-H:]
			lmheadForward(logits, last, m.Weights.LMHead, 1)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("prefill: %w", err)
	}
	return logits, nil
}

// DecodeStep appends one token to each sequence in one batched forward pass
// (weights are read once for the whole batch) and returns each sequence's
// next-token logits. adapters[i] is sequence i's adapter (nil = base); a nil
// adapters slice means base weights for all. A sequence may appear once.
func (m *Model) DecodeStep(seqs []*Sequence, ids []int32, adapters []*Adapter) ([][]float32, error) {
	if len(seqs) != len(ids) || (adapters != nil && len(adapters) != len(seqs)) {
		return nil, fmt.Errorf("decode step: %d sequences, %d ids, %d adapters", len(seqs), len(ids), len(adapters))
	}
	rows := make([]batchRow, len(seqs))
	seen := make(map[*Sequence]bool, len(seqs))
	for i, s := range seqs {
		if seen[s] {
			return nil, fmt.Errorf("decode step: sequence %d appears twice", i)
		}
		seen[s] = true
		if s.maxLen > 0 && s.n+1 > s.maxLen {
			return nil, fmt.Errorf("decode step: sequence %d is at max_position_embeddings %d", i, s.maxLen)
		}
		rows[i] = batchRow{seq: s, pos: s.n}
		if adapters != nil {
			rows[i].adapter = adapters[i]
		}
	}
	hidden, err := m.forward(context.Background(), ids, rows)
	if err != nil {
		for _, s := range seqs {
			s.Truncate(s.n)
		}
		return nil, fmt.Errorf("decode step: %w", err)
	}
	for i, s := range seqs {
		s.n++
		s.ids = append(s.ids, ids[i])
	}
	V := m.Config.VocabSize
	flat := make([]float32, len(seqs)*V)
	lmheadForward(flat, hidden, m.Weights.LMHead, len(seqs))
	out := make([][]float32, len(seqs))
	for i := range out {
		out[i] = flat[i*V : (i+1)*V : (i+1)*V]
	}
	return out, nil
}

// Logits runs ids as a fresh sequence and returns the logits at every
// position, [len(ids), vocab]: the plain full-sequence forward, what
// transformers' model(ids).logits gives.
func (m *Model) Logits(ctx context.Context, ids []int32, adapter *Adapter) ([]float32, error) {
	H, V := m.Config.HiddenSize, m.Config.VocabSize
	out := make([]float32, len(ids)*V)
	err := m.extend(ctx, m.NewSequence(), ids, adapter, func(first int, hidden []float32) {
		lmheadForward(out[first*V:], hidden, m.Weights.LMHead, len(hidden)/H)
	})
	if err != nil {
		return nil, fmt.Errorf("logits: %w", err)
	}
	return out, nil
}

// Chunk is one sequence's share of a Step: tokens to append under an
// adapter (nil = base weights).
type Chunk struct {
	Seq     *Sequence
	IDs     []int32
	Adapter *Adapter
}

// Step appends every chunk's tokens to its sequence in one forward pass and
// returns, per chunk, the logits after its last token. It generalises
// DecodeStep (one token per chunk) and Prefill (one chunk): an engine can
// run new prompts and ongoing decodes in the same pass, reading the weights
// once for all of them. Results equal those of separate calls (bitwise with
// the Go kernels). Rows in one pass are not chunked, so keep the total
// modest (Prefill splits long prompts itself).
func (m *Model) Step(ctx context.Context, chunks []Chunk) ([][]float32, error) {
	var rows []batchRow
	var ids []int32
	last := make([]int, len(chunks))
	seen := make(map[*Sequence]bool, len(chunks))
	for i, c := range chunks {
		if len(c.IDs) == 0 {
			return nil, fmt.Errorf("step: chunk %d has no tokens", i)
		}
		if seen[c.Seq] {
			return nil, fmt.Errorf("step: sequence of chunk %d appears twice", i)
		}
		seen[c.Seq] = true
		if c.Seq.maxLen > 0 && c.Seq.n+len(c.IDs) > c.Seq.maxLen {
			return nil, fmt.Errorf("step: chunk %d: sequence of %d tokens plus %d exceeds max_position_embeddings %d", i, c.Seq.n, len(c.IDs), c.Seq.maxLen)
		}
		c.Seq.reserve(len(c.IDs))
		for j := range c.IDs {
			rows = append(rows, batchRow{seq: c.Seq, pos: c.Seq.n + j, adapter: c.Adapter})
		}
		ids = append(ids, c.IDs...)
		last[i] = len(rows) - 1
	}
	hidden, err := m.forward(ctx, ids, rows)
	if err != nil {
		for _, c := range chunks {
			c.Seq.Truncate(c.Seq.n)
		}
		return nil, fmt.Errorf("step: %w", err)
	}
	H, V := m.Config.HiddenSize, m.Config.VocabSize
	lastHidden := make([]float32, len(chunks)*H)
	for i, c := range chunks {
		c.Seq.n += len(c.IDs)
		c.Seq.ids = append(c.Seq.ids, c.IDs...)
		copy(lastHidden[i*H:(i+1)*H], hidden[last[i]*H:(last[i]+1)*H])
	}
	flat := make([]float32, len(chunks)*V)
	lmheadForward(flat, lastHidden, m.Weights.LMHead, len(chunks))
	out := make([][]float32, len(chunks))
	for i := range out {
		out[i] = flat[i*V : (i+1)*V : (i+1)*V]
	}
	return out, nil
}
