package train

import (
	"math"

	"github.com/clawrl/clawrl/blas"
	"github.com/clawrl/clawrl/model"
	"github.com/clawrl/clawrl/quant"
)

// The LM head, only on the rows that predict a response token: logits =
// h·Wᵀ, then the log-probability of each row's target and the entropy of its
// distribution. The logits buffer is overwritten with the probabilities,
// which is all the backward needs.
//
// With a 152k vocabulary the head is most of a small model's work, so it runs
// in pieces of bounded size with a yield point (workspace.pause) before each:
// a trainer sharing the machine with serving stops within a piece's time of a
// request arriving. Every piece computes exactly what the undivided call
// would (see headForward and headBackward), so where the pauses fall never
// changes a number.

// headForward fills logp[r] = log softmax(z_r)[target[r]] and entropy[r] =
// −Σ p log p for head rows [lo, hi), leaving softmax(z_r) in ws.probs.
func (ws *workspace) headForward(lo, hi int) error {
	a := ws.w.Arch
	D, V := a.Hidden, a.Vocab
	n := hi - lo
	h, w, probs := ws.hrows[lo*D:hi*D], ws.w.lmWeight().Data, ws.probs[:n*V]
	q := ws.w.lmQ()
	// Logit columns are independent and blas sums every element in one
	// order however the columns are split (pieces are multiples of its
	// 12-column alignment), so the pieces give the numbers one call would.
	align := 12
	if q != nil {
		align = 24 // also whole eight-row groups of the packed head (quantLogits)
	}
	cols := ws.pieceSize(2*n*D, V, align)
	for j0 := 0; j0 < V; j0 += cols {
		if err := ws.pause(); err != nil {
			return err
		}
		j1 := min(j0+cols, V)
		if q != nil {
			// The quantized head through model's own kernel (the serving
			// one), on a view of its rows j0..j1.
			if err := ws.quantLogits(probs[j0:], h, n, q, j0, j1); err != nil {
				return err
			}
			continue
		}
		blas.Sgemm(false, true, n, j1-j0, D, 1, h, D, w[j0*D:], D, 0, probs[j0:], V)
	}
	return ws.softmax(probs, lo, n)
}

// quantLogits writes logits of the quantized head's rows [j0, j1) for n
// head rows h into out (row stride vocab), through the serving kernel on
// the head's own packed copy (quant.MatMulRows: no view of the piece is
// packed again each step, and the values are the serving forward's).
func (ws *workspace) quantLogits(out, h []float32, n int, q *quant.Matrix, j0, j1 int) error {
	return quant.MatMulRows(out, ws.w.Arch.Vocab, h, n, q, j0, j1)
}

// softmaxState carries one row's softmax across column pieces.
type softmaxState struct {
	maxv    float32
	sum, ez float64 // Σ exp(z − max), Σ exp(z − max)·z
}

// softmaxBlock is how many columns pass 1 exponentiates at a time: its
// float32 partial sums stay short (accurate), and the block's copy of the
// logits stays in L1.
const softmaxBlock = 1024

// softmax turns rows of logits into probabilities in place and writes each
// row's target log-probability and entropy, for head rows lo.. (n of them).
// The log-probability is z_target − model.LogSumExp(z), what the engine
// reports for a sampled token. A row takes three passes: the max; then
// (after the log-probability) e = exp(z − max) in place with
// blas's vector exponential, accumulating Σe and Σe·z (the entropy's E_p[z]
// before normalising); then p = e/Σe. Each pass walks the row in column
// pieces with a yield point before each. Sums run in float32 over blocks of
// softmaxBlock columns inside a piece and in float64 across blocks; piece
// sizes depend on the shapes only, so where pauses fall changes no bit.
// Rows go in groups of one per core, in parallel.
func (ws *workspace) softmax(probs []float32, lo, n int) error {
	V := ws.w.Arch.Vocab
	rows, cols := ws.pieceRows(), ws.pieceCols(V)
	st := make([]softmaxState, rows)
	for r0 := 0; r0 < n; r0 += rows {
		r1 := min(r0+rows, n)
		for i := range st {
			st[i] = softmaxState{maxv: float32(math.Inf(-1))}
		}
		for pass := range 3 {
			for c0 := 0; c0 < V; c0 += cols {
				if err := ws.pause(); err != nil {
					return err
				}
				c1 := min(c0+cols, V)
				parallelRows(r1-r0, (r1-r0)*(c1-c0)*8, func(a, b int) {
					var buf [softmaxBlock]float32
					for i := a; i < b; i++ {
						r := r0 + i
						z, s := probs[r*V:r*V+V], &st[i]
						switch pass {
						case 0:
							s.maxv = rowMax(z[c0:c1], s.maxv)
						case 1:
							if c0 == 0 {
								// The row is still raw logits: its target's
								// log-probability the way the engine computed
								// the behaviour one (model.Sample), bit for bit.
								ws.logp[lo+r] = z[ws.target[lo+r]] - model.LogSumExp(z)
							}
							sum, ez := s.sum, s.ez
							for b0 := c0; b0 < c1; b0 += softmaxBlock {
								zb := z[b0:min(b0+softmaxBlock, c1)]
								v := buf[:len(zb)]
								copy(v, zb)
								bs := expShiftRow(zb, s.maxv)
								sum += float64(bs)
								ez += float64(blas.Dot(zb, v))
							}
							s.sum, s.ez = sum, ez
							if c1 == V {
								lse := float64(s.maxv) + math.Log(s.sum)
								ws.entropy[lo+r] = float32(lse - s.ez/s.sum)
							}
						case 2:
							scaleRow(z[c0:c1], float32(1/s.sum))
						}
					}
				})
			}
		}
	}
	return nil
}

// headBackward turns d(loss)/d(logp) and d(loss)/d(entropy) of head rows
// [lo, hi) into d(loss)/d(logits) in place of ws.probs, then writes dh
// (the rows' gradient, overwritten) and adds dW when the head trains.
//
//	d logp/d z_j    = δ(j, target) − p_j
//	d entropy/d z_j = −p_j (log p_j + H)
func (ws *workspace) headBackward(dh []float32, lo, hi int) error {
	a := ws.w.Arch
	D, V := a.Hidden, a.Vocab
	n := hi - lo
	lm := ws.w.lmWeight()
	h, probs := ws.hrows[lo*D:hi*D], ws.probs[:n*V]
	// Elementwise, so pieces of rows and columns change nothing.
	rows, cols := ws.pieceRows(), ws.pieceCols(V)
	for r0 := 0; r0 < n; r0 += rows {
		r1 := min(r0+rows, n)
		for c0 := 0; c0 < V; c0 += cols {
			if err := ws.pause(); err != nil {
				return err
			}
			c1 := min(c0+cols, V)
			parallelRows(r1-r0, (r1-r0)*(c1-c0)*4, func(a, b int) {
				for i := a; i < b; i++ {
					r := lo + r0 + i
					dlogitRow(probs[(r0+i)*V:(r0+i+1)*V], c0, c1, ws.dlogp[r], ws.dentropy[r], ws.entropy[r], int(ws.target[r]))
				}
			})
		}
	}
	// dh = dz·W sums over the vocabulary: pieces along it accumulate into
	// dh in a fixed order (the piece size depends on the shapes only).
	voc := ws.pieceSize(2*n*D, V, 12)
	pack := ws.bf16.head(ws.w)
	for v0 := 0; v0 < V; v0 += voc {
		if err := ws.pause(); err != nil {
			return err
		}
		v1 := min(v0+voc, V)
		if pack != nil && v0%2 == 0 && (v1%2 == 0 || v1 == V) {
			blas.GemmBF16Range(n, probs[v0:], V, pack, v0, v1, beta(v0 > 0), dh, D)
			continue
		}
		wv := lm.Data
		if q := ws.w.lmQ(); q != nil {
			// dh = dz·W a piece of the quantized head at a time, widened
			// to float32 only for the piece.
			if all := ws.wide.get(q); all != nil {
				wv = all[v0*D : v1*D]
			} else {
				ws.qlogits = grow(ws.qlogits, (v1-v0)*D)
				dequantizeRows(ws.qlogits, q, v0, v1)
				wv = ws.qlogits
			}
			blas.Sgemm(false, false, n, D, v1-v0, 1, probs[v0:], V, wv, D, beta(v0 > 0), dh, D)
			continue
		}
		blas.Sgemm(false, false, n, D, v1-v0, 1, probs[v0:], V, wv[v0*D:], D, beta(v0 > 0), dh, D)
	}
	if lm.Grad == nil {
		return nil
	}
	// dW += dzᵀ·h: rows of dW (vocabulary entries) are independent, so
	// these pieces are exact.
	for v0 := 0; v0 < V; v0 += voc {
		if err := ws.pause(); err != nil {
			return err
		}
		v1 := min(v0+voc, V)
		blas.Sgemm(true, false, v1-v0, D, n, 1, probs[v0:], V, h, D, 1, lm.Grad[v0*D:], D)
	}
	return nil
}

// dlogitRow overwrites columns [c0, c1) of one row of probabilities p
// with d(loss)/d(logits), given the row's d(loss)/d(logp) gl,
// d(loss)/d(entropy) ge, entropy H and target.
func dlogitRow(p []float32, c0, c1 int, gl, ge, H float32, target int) {
	if ge == 0 {
		// No entropy term (SFT, most RL losses): d = −gl·p, a scaling.
		blas.Scale(p[c0:c1], -gl)
	} else {
		for j := c0; j < c1; j++ {
			pj := p[j]
			d := -gl * pj
			if pj > 0 {
				d -= ge * pj * (float32(math.Log(float64(pj))) + H)
			}
			p[j] = d
		}
	}
	if c0 <= target && target < c1 {
		p[target] += gl
	}
}
