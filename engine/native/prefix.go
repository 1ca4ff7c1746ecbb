package native

import "github.com/clawrl/clawrl/model"

// prefixCache keeps the KV caches of recently finished generations, so a
// request that extends an earlier conversation — every agent turn resends
// the same long system prompt and history — prefills only its new tokens.
// It belongs to the scheduler goroutine and needs no lock.
//
// A cache is only reused under the very adapter that filled it (a LoRA on
// k and v changes every cached position), and a reused sequence leaves the
// cache while it runs, so no two requests ever share one.
//
// Requests that arrive together with the same prompt (a turn's best-of-N
// answers, n choices, a group of rollouts) find no finished generation to
// reuse but each other: a sequence still running holds its prompt's keys
// and values too. Where one shares a longer prefix with the new prompt
// than any cached entry, the new request starts from a copy of that prefix
// (shareRunning): copying a position costs a memmove of its keys and
// values, prefilling it a pass through every layer.
type prefixCache struct {
	maxBytes      int64
	bytesPerToken int64
	bytes         int64
	entries       []prefixEntry // least recently used first
	hits, misses  int64
	reusedTokens  int64
	// copies counts prompts started from a copy of a running sequence's
	// prefix (their tokens are in reusedTokens too).
	copies int64
}

type prefixEntry struct {
	seq     *model.Sequence
	adapter *model.Adapter
}

func newPrefixCache(cfg *model.Config, maxBytes int64) *prefixCache {
	return &prefixCache{maxBytes: maxBytes, bytesPerToken: int64(cfg.NumHiddenLayers) * 2 * int64(cfg.KVDim()) * 4}
}

// take returns a sequence holding the longest cached prefix of prompt under
// adapter, rewound to it, or a nil sequence and 0. At least one prompt token
// is always left to prefill: its logits start the generation. A running
// sequence of active that shares a longer prefix under adapter is copied
// instead, up to that prefix, and the cached entries stay.
func (c *prefixCache) take(prompt []int32, adapter *model.Adapter, active []*running) (*model.Sequence, int) {
	best, bestLen := -1, 0
	for i, e := range c.entries {
		if e.adapter != adapter {
			continue
		}
		if n := commonPrefix(e.seq.Tokens(), prompt[:len(prompt)-1]); n > bestLen {
			best, bestLen = i, n
		}
	}
	if seq, n := shareRunning(prompt, adapter, active, bestLen); seq != nil {
		c.copies++
		c.reusedTokens += int64(n)
		return seq, n
	}
	if best < 0 {
		c.misses++
		return nil, 0
	}
	e := c.entries[best]
	c.entries = append(c.entries[:best], c.entries[best+1:]...)
	c.bytes -= int64(e.seq.Len()) * c.bytesPerToken
	e.seq.Truncate(bestLen)
	c.hits++
	c.reusedTokens += int64(bestLen)
	return e.seq, bestLen
}

// shareRunning returns a copy of the longest prefix of prompt (less its
// last token) that a sequence of active holds under adapter, when it is
// longer than floor; otherwise nil and 0.
func shareRunning(prompt []int32, adapter *model.Adapter, active []*running, floor int) (*model.Sequence, int) {
	var src *model.Sequence
	bestLen := floor
	for _, a := range active {
		if a.r.adapter != adapter {
			continue
		}
		if n := commonPrefix(a.seq.Tokens(), prompt[:len(prompt)-1]); n > bestLen {
			src, bestLen = a.seq, n
		}
	}
	if src == nil {
		return nil, 0
	}
	return src.ClonePrefix(bestLen), bestLen
}

// put keeps a finished sequence, evicting the least recently used ones
// beyond the byte budget.
func (c *prefixCache) put(seq *model.Sequence, adapter *model.Adapter) {
	size := int64(seq.Len()) * c.bytesPerToken
	if size == 0 || size > c.maxBytes {
		return
	}
	c.entries = append(c.entries, prefixEntry{seq: seq, adapter: adapter})
	c.bytes += size
	for c.bytes > c.maxBytes && len(c.entries) > 0 {
		c.bytes -= int64(c.entries[0].seq.Len()) * c.bytesPerToken
		c.entries[0] = prefixEntry{}
		c.entries = c.entries[1:]
	}
}

// drop forgets every cache filled under adapter (an unloaded version).
func (c *prefixCache) drop(keep func(*model.Adapter) bool) {
	kept := c.entries[:0]
	for _, e := range c.entries {
		if keep(e.adapter) {
			kept = append(kept, e)
		} else {
			c.bytes -= int64(e.seq.Len()) * c.bytesPerToken
		}
	}
	clear(c.entries[len(kept):])
	c.entries = kept
}

func commonPrefix(a, b []int32) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}
