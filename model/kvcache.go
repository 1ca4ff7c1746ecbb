package model

import "fmt"

// Sequence is one token sequence's state: the keys and values of every
// position seen so far, per layer. A Sequence belongs to one caller at a
// time; the Model itself is read-only and shared.
type Sequence struct {
	layers []kvCache
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

// Truncate drops cached positions from n on, so a sequence can be rewound to
// a shared prefix and continued differently.
func (s *Sequence) Truncate(n int) {
	if n < 0 || n > s.n {
		panic(fmt.Sprintf("model: Truncate(%d) of a sequence of %d", n, s.n))
	}
	s.n = n
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
	if len(c.k) < end {
		c.k = append(c.k, make([]float32, end-len(c.k))...)
		c.v = append(c.v, make([]float32, end-len(c.v))...)
	}
	copy(c.k[pos*kvDim:end], k)
	copy(c.v[pos*kvDim:end], v)
}
