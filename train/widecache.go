package train

import "github.com/clawrl/clawrl/quant"

// DefaultWideCacheBytes is Config.WideCacheBytes' default: room for every
// frozen block of Qwen2.5-0.5B's shape in float32 (the 24 layers' seven
// projections, 1.43 GB, and the 151,936-row head, 0.54 GB).
const DefaultWideCacheBytes = 2 << 30

// wideCache keeps float32 copies of frozen quantized blocks for the
// micro-batches of one Accumulate call. The backward's dx = dy·W widens
// every projection (and the LM head) for each micro-batch; with several
// micro-batches per step the same blocks were widened again each time
// (about 5 % of a step on Qwen2.5-0.5B Q4_K_M). Widening is row by row,
// so a cached copy holds the very values the tiles would. Blocks that
// do not fit the budget are not cached.
type wideCache struct {
	budget int64 // bytes left
	m      map[*quant.Matrix][]float32
}

// get returns q widened to float32 ([Rows, Cols]), widening it on first
// use, or nil where there is no cache, no q, or no room.
func (c *wideCache) get(q *quant.Matrix) []float32 {
	if c == nil || q == nil {
		return nil
	}
	if w, ok := c.m[q]; ok {
		return w
	}
	n := int64(q.Rows) * int64(q.Cols)
	if 4*n > c.budget {
		return nil
	}
	if c.m == nil {
		c.m = make(map[*quant.Matrix][]float32)
	}
	w := make([]float32, n)
	dequantizeRows(w, q, 0, q.Rows)
	c.budget -= 4 * n
	c.m[q] = w
	return w
}
