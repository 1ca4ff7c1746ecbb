package model

import "fmt"

// Sequence is one token sequence's state: the keys and values of every
// position seen so far, per layer. A Sequence belongs to one caller at a
// time; the Model itself is read-only and shared.
type Sequence struct {
	layers []kvCache
	ids    []int32 // the token at each cached position
	n      int
	kvDim  int
	maxLen int
}

// kvCache is one layer's cache, [positions, num_kv_heads·head_dim] each.
type kvCache struct {
	k, v []float32
}

// NewSequence returns an empty sequence for m.
func (m *Model) NewSequence() *Sequence {
	return &Sequence{layers: make([]kvCache, m.Config.NumHiddenLayers), kvDim: m.Config.KVDim(), maxLen: m.Config.MaxPositionEmbeddings}
}

// Len is the number of positions in the cache.
func (s *Sequence) Len() int { return s.n }

// Tokens returns the token ids in the cache, position by position (the
// caller must not modify them). With Truncate and Clone it is what a prefix
// cache needs: find the longest common prefix with a new prompt, rewind to
// it, prefill only the rest.
func (s *Sequence) Tokens() []int32 { return s.ids[:s.n:s.n] }

// Clone returns an independent copy of the sequence and its cache.
func (s *Sequence) Clone() *Sequence { return s.ClonePrefix(s.n) }

// ClonePrefix returns an independent copy of the sequence's first n
// positions and their cache, as Clone then Truncate(n) would without
// copying the rest.
func (s *Sequence) ClonePrefix(n int) *Sequence {
	if n < 0 || n > s.n {
		panic(fmt.Sprintf("model: ClonePrefix(%d) of a sequence of %d", n, s.n))
	}
	c := &Sequence{layers: make([]kvCache, len(s.layers)), ids: append([]int32(nil), s.ids[:n]...), n: n, kvDim: s.kvDim, maxLen: s.maxLen}
	for i, l := range s.layers {
		c.layers[i] = kvCache{k: append([]float32(nil), l.k[:n*s.kvDim]...), v: append([]float32(nil), l.v[:n*s.kvDim]...)}
	}
	return c
}

// Truncate drops cached positions from n on, so a sequence can be rewound to
// a shared prefix and continued differently.
func (s *Sequence) Truncate(n int) {
	if n < 0 || n > s.n {
		panic(fmt.Sprintf("model: Truncate(%d) of a sequence of %d", n, s.n))
	}
	s.n = n
	s.ids = s.ids[:n]
	for i := range s.layers {
		s.layers[i].k = s.layers[i].k[:n*s.kvDim]
		s.layers[i].v = s.layers[i].v[:n*s.kvDim]
	}
}

// reserve makes room for n more positions in every layer so that a prefill
// grows each cache once.
func (s *Sequence) reserve(n int) {
	need := (s.n + n) * s.kvDim
	for i := range s.layers {
		c := &s.layers[i]
		if cap(c.k) < need {
			k := make([]float32, len(c.k), need)
			copy(k, c.k)
			c.k = k
			v := make([]float32, len(c.v), need)
			copy(v, c.v)
			c.v = v
		}
	}
}

// store writes one position's key and value for a layer. Positions arrive in
// order (pos == current length) or overwrite a position already reserved.
func (c *kvCache) store(pos, kvDim int, k, v []float32) {
	end := (pos + 1) * kvDim
	switch {
	case len(c.k) >= end:
	case cap(c.k) >= end && cap(c.v) >= end: // reserved, or rewound by Truncate
		c.k, c.v = c.k[:end], c.v[:end]
	default:
		c.k = append(c.k, make([]float32, end-len(c.k))...)
		c.v = append(c.v, make([]float32, end-len(c.v))...)
	}
	copy(c.k[pos*kvDim:end], k)
	copy(c.v[pos*kvDim:end], v)
}
