package train

import (
	"fmt"
	"math/rand/v2"
	"runtime"

	"github.com/clawrl/clawrl/model"
)

// The whole-model training forward and backward over one packed micro-batch.
// A workspace owns every activation and gradient buffer; it grows to the
// largest micro-batch seen and is reused for every later one.
//
// The forward is package model's: every layer runs model's own forward
// function (model.RMSNorm, model.Linear.Forward, model.LoRA.Forward,
// model.RopeTable.Apply, model.AttendOne, model.SwiGLU, model.Residual) in
// the order model's serving forward runs them, keeping the activations the
// backward needs. So a token's log-probability recomputed here (π_old)
// equals, bit for bit, the behaviour log-probability the native engine
// recorded when it generated the token under the same weights, and PPO
// ratios start at exactly 1.

// layerActs are one block's saved activations. With activation
// recomputation a single layerActs is shared by all blocks and refilled from
// the block's saved input during the backward.
//
// Under a tight activation budget (Config.ActivationBudget) a block keeps
// only what the backward cannot remake for the price of an elementwise
// pass: ln1, ln2 and act are then nil, and the backward recomputes them
// into the workspace's scratch from the block's input, h1, gate and up by
// the forward's own functions, so with the same bits. q and k before RoPE
// are always scratch unless the q/k norms' backward reads them.
type layerActs struct {
	ln1, rstd1   []float32
	q, k         []float32 // before the q/k norms; kept only with them (Qwen3)
	v            []float32
	rstdq, rstdk []float32
	qr, kr       []float32 // after RoPE
	lse          []float32 // attention log-sum-exp per (token, head)
	att          []float32
	h1           []float32 // residual after attention
	ln2, rstd2   []float32
	gate, up     []float32
	act          []float32
	lora         [7]*loraActs
	capTok       int
}

// kept is buf[:n] when the block keeps it, else the scratch's first n.
func kept(buf, scratch []float32, n int) []float32 {
	if buf != nil {
		return buf[:n]
	}
	return scratch[:n]
}

// workspace holds everything one micro-batch needs.
type workspace struct {
	w      *Weights
	capTok int

	ids  []int32
	pos  []int32
	segs []segment

	xs     [][]float32 // xs[l] is block l's input, xs[Layers] the last output
	acts   []*layerActs
	lnf    []float32
	rstdf  []float32
	inv    []float32       // rotary inverse frequencies, as model's forward has them
	rope   model.RopeTable // one row per token of the micro-batch
	posInt []int
	shared bool // one layerActs for all blocks (recomputation)
	// budget bounds the bytes of activations kept per micro-batch
	// (Config.ActivationBudget; negative: no bound; see layerActs).
	budget int64
	// headBudget overrides headLogitsBudget (tests).
	headBudget int
	// baseOnly runs the forward without the LoRA adapters (π_ref in LoRA
	// mode is the base model).
	baseOnly bool
	// yield, when set, runs at every yield point of the forward and the
	// backward (between blocks, between a block's stages, between LM head
	// pieces); an error aborts the pass. See Trainer.SetYield.
	yield func() error
	// pieceFlops and pieceElems override the LM head's piece sizes (tests).
	pieceFlops, pieceElems int

	// LM head rows: only positions that predict a response token.
	rowTok   []int32 // token index within the micro-batch
	target   []int32
	hrows    []float32  // [R, D]
	qlogits  []float32  // scratch for a quantized head's piece
	wide     *wideCache // widened frozen blocks for this Accumulate call, or nil
	bf16     *bf16Packs // frozen weights in bf16 for the backward, or nil (fp32)
	probs    []float32  // [min(R, headChunk), V]
	logp     []float32
	entropy  []float32
	dlogp    []float32
	dentropy []float32

	// Gradient scratch, shared by all blocks.
	dx, dln, datt, dq, dk, dv, dqr, dkr, dqn, dkn, dgate, dup, dact, dlnf []float32
	// Activation scratch, shared by all blocks: a norm's output (ln) and
	// SwiGLU's product (act) where blocks do not keep them, q and k before
	// RoPE (or, with q/k norms, after them), and the rstd a recomputed
	// norm writes (rstd).
	ln, act, qs, ks, rstd []float32
}

func newWorkspace(w *Weights, recompute bool, budget int64) (*workspace, error) {
	a := w.Arch
	inv, err := ropeInvFreq(a)
	if err != nil {
		return nil, err
	}
	ws := &workspace{w: w, shared: recompute, inv: inv, budget: budget}
	n := a.Layers
	if recompute {
		n = 1
	}
	ws.acts = make([]*layerActs, n)
	for i := range ws.acts {
		ws.acts[i] = &layerActs{}
	}
	ws.xs = make([][]float32, a.Layers+1)
	return ws, nil
}

func grow(b []float32, n int) []float32 {
	if cap(b) >= n {
		return b[:n]
	}
	return make([]float32, n)
}

// prepare lays out the micro-batch and grows buffers to fit it.
func (ws *workspace) prepare(seqs []Sequence) {
	a := ws.w.Arch
	ws.ids, ws.pos, ws.segs = ws.ids[:0], ws.pos[:0], ws.segs[:0]
	ws.rowTok, ws.target = ws.rowTok[:0], ws.target[:0]
	for _, s := range seqs {
		start := len(ws.ids)
		ws.ids = append(ws.ids, s.PromptIDs...)
		ws.ids = append(ws.ids, s.ResponseIDs...)
		L := len(s.PromptIDs) + len(s.ResponseIDs)
		for p := range L {
			ws.pos = append(ws.pos, int32(p))
		}
		ws.segs = append(ws.segs, segment{start, L})
		for j, id := range s.ResponseIDs {
			ws.rowTok = append(ws.rowTok, int32(start+len(s.PromptIDs)+j-1))
			ws.target = append(ws.target, id)
		}
	}
	ws.posInt = ws.posInt[:0]
	for _, p := range ws.pos {
		ws.posInt = append(ws.posInt, int(p))
	}
	ws.rope = model.NewRopeTable(ws.inv, ws.posInt)
	T := len(ws.ids)
	D, F := a.Hidden, a.Intermediate
	qd, kd := a.Heads*a.HeadDim, a.KVHeads*a.HeadDim
	for l := range ws.xs {
		ws.xs[l] = grow(ws.xs[l], T*D)
	}
	// Blocks sized for a larger micro-batch go lean where it passes the
	// budget (recomputation's one shared block keeps everything).
	lean := ws.lean() || !ws.shared && ws.budget >= 0 && ws.actBytes(T) > ws.budget
	for li, la := range ws.acts {
		if T > la.capTok {
			la.ln1, la.ln2, la.act = nil, nil, nil
			if !lean {
				la.ln1, la.ln2, la.act = make([]float32, T*D), make([]float32, T*D), make([]float32, T*F)
			}
			la.rstd1, la.v = make([]float32, T), make([]float32, T*kd)
			if a.QKNorm {
				la.q, la.k = make([]float32, T*qd), make([]float32, T*kd)
				la.rstdq, la.rstdk = make([]float32, T*a.Heads), make([]float32, T*a.KVHeads)
			}
			la.qr, la.kr = make([]float32, T*qd), make([]float32, T*kd)
			la.att, la.h1 = make([]float32, T*qd), make([]float32, T*D)
			la.lse = make([]float32, T*a.Heads)
			la.rstd2 = make([]float32, T)
			la.gate, la.up = make([]float32, T*F), make([]float32, T*F)
			// A shared layerActs (recomputation) serves every block, so its
			// adapter buffers fit the largest rank any block has.
			blocks := ws.w.Layers[li : li+1]
			if ws.shared {
				blocks = ws.w.Layers
			}
			for m := range la.lora {
				rank, in, dropout := 0, 0, false
				for bi := range blocks {
					lin := blocks[bi].linears()[m].lin
					if lin.LoRA != nil {
						rank, in = max(rank, lin.LoRA.Rank), lin.In
						dropout = dropout || lin.LoRA.Dropout > 0
					}
				}
				la.lora[m] = newLoRAActs(rank, in, dropout, T)
			}
			la.capTok = T
		}
	}
	ws.lnf, ws.rstdf = grow(ws.lnf, T*D), grow(ws.rstdf, T)
	R := len(ws.rowTok)
	ws.hrows = grow(ws.hrows, R*D)
	ws.probs = grow(ws.probs, min(R, ws.headChunk())*a.Vocab)
	ws.logp, ws.entropy = grow(ws.logp, R), grow(ws.entropy, R)
	ws.dlogp, ws.dentropy = grow(ws.dlogp, R), grow(ws.dentropy, R)
	if T > ws.capTok {
		ws.dx, ws.dln, ws.dlnf = make([]float32, T*D), make([]float32, T*D), make([]float32, T*D)
		ws.dqn, ws.dkn = make([]float32, T*qd), make([]float32, T*kd)
		ws.datt, ws.dq, ws.dqr = make([]float32, T*qd), make([]float32, T*qd), make([]float32, T*qd)
		ws.dk, ws.dv, ws.dkr = make([]float32, T*kd), make([]float32, T*kd), make([]float32, T*kd)
		ws.dgate, ws.dup, ws.dact = make([]float32, T*F), make([]float32, T*F), make([]float32, T*F)
		ws.qs, ws.ks = make([]float32, T*qd), make([]float32, T*kd)
		ws.capTok = T
	}
	if lean {
		ws.ln, ws.act, ws.rstd = grow(ws.ln, T*D), grow(ws.act, T*F), grow(ws.rstd, T)
	}
}

// lean reports whether the blocks keep no norm outputs or SwiGLU product
// (the budget's lean form; see layerActs).
func (ws *workspace) lean() bool {
	la := ws.acts[0]
	return la.capTok > 0 && la.act == nil
}

// actBytes is about what every block keeping all its activations costs for
// a micro-batch of T tokens (the adapters' small buffers left out).
func (ws *workspace) actBytes(T int) int64 {
	a := ws.w.Arch
	D, F := a.Hidden, a.Intermediate
	qd, kd := a.Heads*a.HeadDim, a.KVHeads*a.HeadDim
	per := 3*D + 3*F + 3*qd + 2*kd + a.Heads + 2
	if a.QKNorm {
		per += qd + kd + a.Heads + a.KVHeads
	}
	return 4 * int64(T) * int64(a.Layers) * int64(per)
}

func (ws *workspace) actsFor(l int) *layerActs {
	if ws.shared {
		return ws.acts[0]
	}
	return ws.acts[l]
}

// dropoutRNG returns the generator for one adapter's mask in one block of one
// micro-batch, or nil in eval mode. Seeding by position makes recomputation
// draw the same mask.
func dropoutRNG(seed uint64, train bool, layer, module int) *rand.Rand {
	if !train {
		return nil
	}
	return rand.New(rand.NewPCG(seed, uint64(layer*16+module)))
}

// blockForward runs block l on x (its input) into out.
func (ws *workspace) blockForward(l int, x, out []float32, la *layerActs, seed uint64, train bool) error {
	a := ws.w.Arch
	L := &ws.w.Layers[l]
	T := len(ws.ids)
	D := a.Hidden
	hd := a.HeadDim
	eps := float32(a.RMSNormEps)
	lins := L.linears()
	// Every projection is a yield point: the pause comes before it, so a
	// stop leaves the block half done, which an aborted pass may.
	fwd := func(m int, out, inp []float32) error {
		if err := ws.pause(); err != nil {
			return err
		}
		lin := lins[m].lin
		la := la.lora[m]
		if ws.baseOnly && lin.LoRA != nil {
			base := *lin
			base.LoRA = nil
			lin = &base
		}
		linearForward(out[:T*lin.Out], inp, T, lin, la, dropoutRNG(seed, train, l, m))
		return nil
	}

	qd, kd := a.Heads*hd, a.KVHeads*hd
	F := a.Intermediate
	ln := kept(la.ln1, ws.ln, T*D)
	rmsnormForward(ln, la.rstd1, x, L.InputNorm.Data, T, D, eps)
	q, k := ws.qs[:T*qd], ws.ks[:T*kd]
	if a.QKNorm {
		q, k = la.q, la.k
	}
	for m, dst := range [3][]float32{q, k, la.v} {
		if err := fwd(m, dst, ln); err != nil {
			return err
		}
	}
	qsrc, ksrc := q, k
	if a.QKNorm {
		qsrc, ksrc = ws.qs[:T*qd], ws.ks[:T*kd]
		rmsnormForward(qsrc, la.rstdq, la.q, L.QNorm.Data, T*a.Heads, hd, eps)
		rmsnormForward(ksrc, la.rstdk, la.k, L.KNorm.Data, T*a.KVHeads, hd, eps)
	}
	copy(la.qr[:T*qd], qsrc)
	copy(la.kr[:T*kd], ksrc)
	ws.rope.Apply(la.qr, T, a.Heads)
	ws.rope.Apply(la.kr, T, a.KVHeads)
	sh := attnShape{a.Heads, a.KVHeads, hd}
	if err := ws.pause(); err != nil {
		return err
	}
	attentionForward(la.att, la.lse, la.qr, la.kr, la.v, ws.segs, sh)
	if err := fwd(3, la.h1, la.att); err != nil {
		return err
	}
	model.Residual(la.h1[:T*D], x)
	ln = kept(la.ln2, ws.ln, T*D)
	rmsnormForward(ln, la.rstd2, la.h1, L.PostNorm.Data, T, D, eps)
	if err := fwd(4, la.gate, ln); err != nil {
		return err
	}
	if err := fwd(5, la.up, ln); err != nil {
		return err
	}
	act := kept(la.act, ws.act, T*F)
	swigluForward(act, la.gate[:T*F], la.up[:T*F])
	if err := fwd(6, out, act); err != nil {
		return err
	}
	model.Residual(out[:T*D], la.h1)
	return nil
}

// blockBackward takes d(loss)/d(block output) in ws.dx and leaves
// d(loss)/d(block input) there, accumulating parameter gradients.
func (ws *workspace) blockBackward(l int, x []float32, la *layerActs) error {
	a := ws.w.Arch
	L := &ws.w.Layers[l]
	T := len(ws.ids)
	D, F := a.Hidden, a.Intermediate
	hd := a.HeadDim
	qd, kd := a.Heads*hd, a.KVHeads*hd
	lins := L.linears()
	bwd := func(m int, dinp, dout, inp []float32) error {
		if err := ws.pause(); err != nil {
			return err
		}
		l := lins[m].lin
		if pack := ws.bf16.linear(l); pack != nil {
			linearBackward(dinp, dout, inp, T, l, la.lora[m], nil, pack)
			return nil
		}
		linearBackward(dinp, dout, inp, T, l, la.lora[m], ws.wide.get(l.Q), nil)
		return nil
	}
	dx := ws.dx[:T*D]

	// MLP: out = h1 + down(silu(gate(ln2))∘up(ln2))
	eps := float32(a.RMSNormEps)
	// The inputs a lean block did not keep are remade by the forward's
	// own functions where a projection's backward reads its input (a
	// trained weight or adapter).
	act := kept(la.act, ws.act, T*F)
	if la.act == nil && lins[6].lin.readsInput() {
		swigluForward(act, la.gate[:T*F], la.up[:T*F])
	}
	dact := ws.dact[:T*F]
	clear(dact)
	if err := bwd(6, dact, dx, act); err != nil {
		return err
	}
	swigluBackward(ws.dgate[:T*F], ws.dup[:T*F], dact, la.gate[:T*F], la.up[:T*F])
	ln := kept(la.ln2, ws.ln, T*D)
	if la.ln2 == nil && (lins[4].lin.readsInput() || lins[5].lin.readsInput()) {
		rmsnormForward(ln, ws.rstd[:T], la.h1, L.PostNorm.Data, T, D, eps)
	}
	dln := ws.dln[:T*D]
	clear(dln)
	if err := bwd(4, dln, ws.dgate[:T*F], ln); err != nil {
		return err
	}
	if err := bwd(5, dln, ws.dup[:T*F], ln); err != nil {
		return err
	}
	rmsnormBackward(dx, gradOf(L.PostNorm), dln, la.h1, L.PostNorm.Data, la.rstd2, T, D)

	// Attention: h1 = x + o(attn(rope(norm(q)), rope(norm(k)), v))
	datt := ws.datt[:T*qd]
	clear(datt)
	if err := bwd(3, datt, dx, la.att); err != nil {
		return err
	}
	if err := ws.pause(); err != nil {
		return err
	}
	sh := attnShape{a.Heads, a.KVHeads, hd}
	attentionBackward(ws.dqr[:T*qd], ws.dkr[:T*kd], ws.dv[:T*kd], datt, la.lse, la.qr, la.kr, la.v, la.att, ws.segs, sh)
	dq, dk := ws.dq[:T*qd], ws.dk[:T*kd]
	if a.QKNorm {
		dqn, dkn := ws.dqn[:T*qd], ws.dkn[:T*kd]
		ropeBackward(dqn, ws.dqr[:T*qd], T, a.Heads, ws.rope)
		ropeBackward(dkn, ws.dkr[:T*kd], T, a.KVHeads, ws.rope)
		clear(dq)
		clear(dk)
		rmsnormBackward(dq, gradOf(L.QNorm), dqn, la.q, L.QNorm.Data, la.rstdq, T*a.Heads, hd)
		rmsnormBackward(dk, gradOf(L.KNorm), dkn, la.k, L.KNorm.Data, la.rstdk, T*a.KVHeads, hd)
	} else {
		ropeBackward(dq, ws.dqr[:T*qd], T, a.Heads, ws.rope)
		ropeBackward(dk, ws.dkr[:T*kd], T, a.KVHeads, ws.rope)
	}
	// The first block's input gradient goes only to the embeddings: with
	// them and the first norm frozen (LoRA), nothing reads it, so the q, k
	// and v projections skip dx (their adapters still get gradients).
	dlnIn := dln
	if l == 0 && ws.w.Embed.Grad == nil && gradOf(L.InputNorm) == nil {
		dlnIn = nil
	}
	clear(dln)
	ln = kept(la.ln1, ws.ln, T*D)
	if la.ln1 == nil && (lins[0].lin.readsInput() || lins[1].lin.readsInput() || lins[2].lin.readsInput()) {
		rmsnormForward(ln, ws.rstd[:T], x, L.InputNorm.Data, T, D, eps)
	}
	for m, dout := range [3][]float32{dq, dk, ws.dv[:T*kd]} {
		if err := bwd(m, dlnIn, dout, ln); err != nil {
			return err
		}
	}
	if dlnIn != nil {
		rmsnormBackward(dx, gradOf(L.InputNorm), dln, x, L.InputNorm.Data, la.rstd1, T, D)
	}
	return nil
}

// forward runs the micro-batch prepared in ws and fills ws.logp and
// ws.entropy for every response token, in sequence order.
func (ws *workspace) forward(seed uint64, train bool) error {
	if err := ws.forwardBlocks(seed, train); err != nil {
		return err
	}
	return ws.headChunks(len(ws.rowTok), ws.headForward)
}

// forwardBlocks is forward up to the LM head: the blocks, the final norm and
// the head rows gathered into ws.hrows.
func (ws *workspace) forwardBlocks(seed uint64, train bool) error {
	a := ws.w.Arch
	T := len(ws.ids)
	D := a.Hidden
	embed := model.Linear{Out: a.Vocab, In: D, W: ws.w.Embed.Data, Q: ws.w.embedQ}
	if err := embed.Embed(ws.xs[0], ws.ids); err != nil {
		return err
	}
	for l := range a.Layers {
		if err := ws.blockForward(l, ws.xs[l], ws.xs[l+1], ws.actsFor(l), seed, train); err != nil {
			return err
		}
	}
	if err := ws.pause(); err != nil {
		return err
	}
	rmsnormForward(ws.lnf, ws.rstdf, ws.xs[a.Layers], ws.w.FinalNorm.Data, T, D, float32(a.RMSNormEps))
	for r, t := range ws.rowTok {
		copy(ws.hrows[r*D:r*D+D], ws.lnf[int(t)*D:int(t)*D+D])
	}
	return nil
}

// headGroups splits the head rows into runs of whole sequences (seqRows[i]
// rows each, in order) of at most headChunk rows: {first sequence, end
// sequence, first row, end row}. It returns nil when one sequence alone has
// more rows than a chunk.
func (ws *workspace) headGroups(seqRows []int) [][4]int {
	c := ws.headChunk()
	var groups [][4]int
	s0, r0, r := 0, 0, 0
	for i, n := range seqRows {
		if n > c {
			return nil
		}
		if r+n-r0 > c {
			groups = append(groups, [4]int{s0, i, r0, r})
			s0, r0 = i, r
		}
		r += n
	}
	return append(groups, [4]int{s0, len(seqRows), r0, r})
}

// trainPass is forward and backward of one training micro-batch, with
// loss(s0, s1) run between them for sequences [s0, s1): it reads their rows
// of ws.logp and ws.entropy and writes their ws.dlogp and ws.dentropy
// (scaled). seqRows[i] is sequence i's number of response tokens.
//
// When whole sequences fit in the head's chunks, each chunk's logits are
// computed once: head forward, the loss of the chunk's sequences, head
// backward, chunk after chunk, then the blocks' backward. (Taking all the
// logits first and the backward after would keep only the last chunk's
// probabilities and compute every other chunk's twice: at SmolLM2's shape,
// 2,016 head rows in 680-row chunks, two thirds of the LM head's forward
// again.) The loss of a sequence depends only on its own rows, and a row's
// logits, log-probabilities and gradient do not depend on the other rows
// of its chunk, so both orders give the same numbers.
func (ws *workspace) trainPass(seed uint64, seqRows []int, loss func(s0, s1 int)) error {
	groups := ws.headGroups(seqRows)
	if groups == nil {
		if err := ws.forward(seed, true); err != nil {
			return err
		}
		loss(0, len(seqRows))
		return ws.backward(seed)
	}
	if err := ws.forwardBlocks(seed, true); err != nil {
		return err
	}
	D := ws.w.Arch.Hidden
	dh := ws.dln[:len(ws.rowTok)*D] // dln is free until the blocks run
	for _, g := range groups {
		if g[3] == g[2] {
			loss(g[0], g[1])
			continue
		}
		if err := ws.headForward(g[2], g[3]); err != nil {
			return err
		}
		loss(g[0], g[1])
		if err := ws.headBackward(dh[g[2]*D:g[3]*D], g[2], g[3]); err != nil {
			return err
		}
	}
	return ws.backwardBlocks(seed)
}

// pause is a yield point. Everything the pass has computed so far sits in
// the workspace and nothing else touches it while yield waits, so a pass
// that pauses computes exactly what one that does not would.
func (ws *workspace) pause() error {
	if ws.yield == nil {
		return nil
	}
	return ws.yield()
}

// defaultPieceFlops bounds the work between two yield points inside the LM
// head's matrix products: about three milliseconds on two cores, a tenth of
// the longest stretch without one (a block's largest projection, 5.4 GFLOP
// at the SmolLM2 batch). Smaller pieces cost more than they save: a piece
// of the logits is a column range that every head row streams through once
// (blas packs the rows again for each piece; at the SmolLM2 shape a 16 MFLOP
// piece was 12 columns, the 680 rows re-read per 12 columns), and a piece of
// dh = dz·W reads and writes all of dh.
const defaultPieceFlops = 512 << 20

// defaultPieceElems bounds the softmax elements between two yield points:
// about a millisecond of exp on one core.
const defaultPieceElems = 64 << 10

// pieceSize is how many units (each costing unitFlops) one piece of a total
// takes: a multiple of align, at least align. It depends on shapes only, so
// results do not depend on where pauses happen.
func (ws *workspace) pieceSize(unitFlops, total, align int) int {
	budget := ws.pieceFlops
	if budget == 0 {
		budget = defaultPieceFlops
	}
	n := budget / max(1, unitFlops) / align * align
	return min(max(align, n), total)
}

// pieceRows is how many rows one elementwise piece of the LM head takes:
// one per core, so the piece still runs in parallel.
func (ws *workspace) pieceRows() int { return max(1, runtime.GOMAXPROCS(0)) }

// pieceCols is how many columns of a vocab-wide row one elementwise piece
// takes.
func (ws *workspace) pieceCols(vocab int) int {
	budget := ws.pieceElems
	if budget == 0 {
		budget = defaultPieceElems
	}
	return min(vocab, max(256, budget/ws.pieceRows()))
}

// headLogitsBudget bounds the LM head's probability buffer (floats): with a
// 152k vocabulary, 2048 response rows would otherwise take 1.2 GB.
const headLogitsBudget = 32 << 20

// headChunk is how many LM head rows are processed at once.
func (ws *workspace) headChunk() int {
	b := ws.headBudget
	if b == 0 {
		b = headLogitsBudget
	}
	// A multiple of 4 rows when it can be: the logits' kernel takes rows
	// four at a time, and a leftover row runs a slower one.
	n := b / ws.w.Arch.Vocab
	if n >= 4 {
		n &^= 3
	}
	return max(1, n)
}

// headChunks calls fn on consecutive row ranges of at most headChunk rows,
// stopping at its first error.
func (ws *workspace) headChunks(R int, fn func(lo, hi int) error) error {
	c := ws.headChunk()
	for lo := 0; lo < R; lo += c {
		if err := fn(lo, min(lo+c, R)); err != nil {
			return err
		}
	}
	return nil
}

// backward starts from ws.dlogp and ws.dentropy (already scaled) and
// accumulates gradients into every trainable tensor.
func (ws *workspace) backward(seed uint64) error {
	D := ws.w.Arch.Hidden
	R := len(ws.rowTok)
	dh := ws.dln[:R*D] // dln is free until the blocks run
	chunked := R > ws.headChunk()
	err := ws.headChunks(R, func(lo, hi int) error {
		if chunked {
			// Only the last chunk's probabilities survived the forward:
			// recompute this chunk's (logp and entropy come out identical).
			if err := ws.headForward(lo, hi); err != nil {
				return err
			}
		}
		return ws.headBackward(dh[lo*D:hi*D], lo, hi)
	})
	if err != nil {
		return err
	}
	return ws.backwardBlocks(seed)
}

// backwardBlocks is backward after the LM head: it takes the head rows'
// gradient from ws.dln and runs the final norm and the blocks.
func (ws *workspace) backwardBlocks(seed uint64) error {
	a := ws.w.Arch
	T := len(ws.ids)
	D := a.Hidden
	dh := ws.dln[:len(ws.rowTok)*D]
	// Scatter the head rows' gradient back to the tokens they came from.
	dlnf := ws.dlnf[:T*D]
	clear(dlnf)
	for r, t := range ws.rowTok {
		axpy(1, dh[r*D:r*D+D], dlnf[int(t)*D:int(t)*D+D])
	}
	dx := ws.dx[:T*D]
	clear(dx)
	rmsnormBackward(dx, gradOf(ws.w.FinalNorm), dlnf, ws.xs[a.Layers], ws.w.FinalNorm.Data, ws.rstdf, T, D)
	for l := a.Layers - 1; l >= 0; l-- {
		la := ws.actsFor(l)
		if ws.shared {
			// Recompute block l's activations from its saved input; the
			// output buffer is scratch here (the next block's input is no
			// longer needed).
			if err := ws.blockForward(l, ws.xs[l], ws.xs[l+1], la, seed, true); err != nil {
				return err
			}
		}
		if err := ws.blockBackward(l, ws.xs[l], la); err != nil {
			return err
		}
	}
	if g := ws.w.Embed.Grad; g != nil {
		embeddingBackward(g, dx, ws.ids, D)
	}
	return nil
}

// ropeInvFreq is the rotary inverse frequencies model's forward uses for a:
// Arch.InvFreq (from the model's config, scaling applied) rounded to
// float32, or, for weights built in memory, what model's config parser
// makes of a's config.
func ropeInvFreq(a Arch) ([]float32, error) {
	inv := a.InvFreq
	if inv == nil {
		raw, err := a.configJSON()
		if err == nil {
			var c *model.Config
			if c, err = model.ParseConfig(raw); err == nil {
				inv = c.RopeInvFreq()
			}
		}
		if err != nil {
			return nil, fmt.Errorf("train: rotary frequencies: %w", err)
		}
	}
	out := make([]float32, len(inv))
	for i, f := range inv {
		out[i] = float32(f)
	}
	return out, nil
}
