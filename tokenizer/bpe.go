package tokenizer

import (
	"strings"
	"sync"
)

// bpe is the byte-level BPE model. It works on raw bytes: a word's initial
// symbols are the tokens of its single bytes, and a merge of two tokens is
// the token of their concatenated bytes.
type bpe struct {
	byteID       [256]int32 // token of each single byte, -1 if the vocab lacks it
	merges       mergeTable
	wordID       map[string]int32 // raw bytes → token (for ignore_merges)
	ignoreMerges bool
	unk          int32 // -1 = none: bytes without a token are dropped, as in Hugging Face
	fuseUnk      bool
	cache        wordCache
}

// mergeTable maps a pair of adjacent tokens to the rank of their merge and
// the token it makes. It is an open-addressing hash table with linear
// probing: the merge loop looks pairs up millions of times per second, and
// this is several times faster than a Go map.
type mergeTable struct {
	keys  []uint64 // pairKey(left, right); emptyKey marks a free slot
	vals  []uint64 // rank<<32 | merged token
	mask  uint64
	count int
}

const emptyKey = ^uint64(0)

func pairKey(left, right int32) uint64 { return uint64(uint32(left))<<32 | uint64(uint32(right)) }

func newMergeTable(n int) mergeTable {
	size := 16
	for size < 2*n {
		size *= 2
	}
	t := mergeTable{keys: make([]uint64, size), vals: make([]uint64, size), mask: uint64(size - 1)}
	for i := range t.keys {
		t.keys[i] = emptyKey
	}
	return t
}

func hashPair(key uint64) uint64 {
	key ^= key >> 29
	key *= 0xbf58476d1ce4e5b9
	key ^= key >> 32
	return key
}

// put inserts or replaces a merge (a later duplicate wins, as when Hugging
// Face collects the merges into a map).
func (t *mergeTable) put(left, right, rank, merged int32) {
	key := pairKey(left, right)
	for i := hashPair(key) & t.mask; ; i = (i + 1) & t.mask {
		if t.keys[i] == emptyKey {
			t.keys[i] = key
			t.count++
		} else if t.keys[i] != key {
			continue
		}
		t.vals[i] = uint64(uint32(rank))<<32 | uint64(uint32(merged))
		return
	}
}

// get returns the merge of (left, right).
func (t *mergeTable) get(left, right int32) (rank, merged int32, ok bool) {
	key := pairKey(left, right)
	for i := hashPair(key) & t.mask; ; i = (i + 1) & t.mask {
		switch t.keys[i] {
		case key:
			v := t.vals[i]
			return int32(v >> 32), int32(uint32(v)), true
		case emptyKey:
			return 0, 0, false
		}
	}
}

// noMerge is the rank of a pair that has no merge.
const noMerge = int32(1<<31 - 1)

// scratch holds the buffers of one word's merge loop, reused across words.
type scratch struct {
	ids   []int32
	ranks []int32 // ranks[i]: rank of merging ids[i] and ids[i+1]
	made  []int32 // made[i]: the token that merge makes
	sym   []symbol
	heap  []heapEntry

	words, words2 []span // pre-tokenizer output, double-buffered
}

// encodeWord appends the tokens of one word (raw bytes) to dst.
func (m *bpe) encodeWord(dst []int32, word string, sc *scratch) []int32 {
	if m.ignoreMerges {
		if id, ok := m.wordID[word]; ok {
			return append(dst, id)
		}
	}
	if ids, ok := m.cache.get(word); ok {
		return append(dst, ids...)
	}
	ids := sc.ids[:0]
	prevUnk := false
	for i := 0; i < len(word); i++ {
		id := m.byteID[word[i]]
		if id < 0 {
			if m.unk < 0 || (m.fuseUnk && prevUnk) {
				continue
			}
			id, prevUnk = m.unk, true
		} else {
			prevUnk = false
		}
		ids = append(ids, id)
	}
	if len(ids) > heapThreshold {
		ids = m.mergeHeap(ids, sc)
	} else {
		ids = m.mergeLinear(ids, sc)
	}
	sc.ids = ids
	m.cache.put(word, ids)
	return append(dst, ids...)
}

// heapThreshold is the word length above which the O(n log n) heap merge
// beats the O(n²) scan, whose constant is tiny.
const heapThreshold = 48

// mergeLinear repeatedly merges the adjacent pair with the lowest rank
// (leftmost on ties) until none can merge. This yields exactly what
// Hugging Face's priority-queue loop yields (see mergeHeap).
func (m *bpe) mergeLinear(ids []int32, sc *scratch) []int32 {
	if len(ids) < 2 {
		return ids
	}
	ranks, made := sc.ranks[:0], sc.made[:0]
	for i := 0; i+1 < len(ids); i++ {
		r, t, ok := m.merges.get(ids[i], ids[i+1])
		if !ok {
			r = noMerge
		}
		ranks, made = append(ranks, r), append(made, t)
	}
	sc.ranks, sc.made = ranks, made
	for {
		best, at := noMerge, -1
		for i, r := range ranks {
			if r < best {
				best, at = r, i
			}
		}
		if at < 0 {
			return ids
		}
		ids[at] = made[at]
		copy(ids[at+1:], ids[at+2:])
		ids = ids[:len(ids)-1]
		copy(ranks[at:], ranks[at+1:])
		copy(made[at:], made[at+1:])
		ranks, made = ranks[:len(ranks)-1], made[:len(made)-1]
		if at > 0 {
			ranks[at-1], made[at-1] = m.rank(ids[at-1], ids[at])
		}
		if at < len(ranks) {
			ranks[at], made[at] = m.rank(ids[at], ids[at+1])
		}
	}
}

func (m *bpe) rank(left, right int32) (int32, int32) {
	r, t, ok := m.merges.get(left, right)
	if !ok {
		return noMerge, 0
	}
	return r, t
}

type symbol struct {
	id         int32
	prev, next int32 // neighbours, -1 at the ends
	gone       bool  // merged into its left neighbour
}

type heapEntry struct {
	rank, pos, made int32
}

func (a heapEntry) less(b heapEntry) bool {
	return a.rank < b.rank || (a.rank == b.rank && a.pos < b.pos)
}

// mergeHeap is tokenizers' Word::merge_all: a min-heap of candidate merges
// ordered by (rank, position); entries made stale by earlier merges are
// skipped when popped.
func (m *bpe) mergeHeap(ids []int32, sc *scratch) []int32 {
	sym := sc.sym[:0]
	for i, id := range ids {
		sym = append(sym, symbol{id: id, prev: int32(i - 1), next: int32(i + 1)})
	}
	sym[len(sym)-1].next = -1
	h := sc.heap[:0]
	push := func(e heapEntry) {
		h = append(h, e)
		for i := len(h) - 1; i > 0; {
			parent := (i - 1) / 2
			if !h[i].less(h[parent]) {
				break
			}
			h[i], h[parent] = h[parent], h[i]
			i = parent
		}
	}
	pop := func() heapEntry {
		top := h[0]
		last := len(h) - 1
		h[0] = h[last]
		h = h[:last]
		for i := 0; ; {
			l, r, small := 2*i+1, 2*i+2, i
			if l < len(h) && h[l].less(h[small]) {
				small = l
			}
			if r < len(h) && h[r].less(h[small]) {
				small = r
			}
			if small == i {
				break
			}
			h[i], h[small] = h[small], h[i]
			i = small
		}
		return top
	}
	for i := 0; i+1 < len(sym); i++ {
		if r, t, ok := m.merges.get(sym[i].id, sym[i+1].id); ok {
			push(heapEntry{rank: r, pos: int32(i), made: t})
		}
	}
	for len(h) > 0 {
		top := pop()
		cur := &sym[top.pos]
		if cur.gone || cur.next < 0 {
			continue
		}
		right := &sym[cur.next]
		if _, t, ok := m.merges.get(cur.id, right.id); !ok || t != top.made {
			continue // stale: one side has changed since this entry was pushed
		}
		cur.id = top.made
		right.gone = true
		cur.next = right.next
		if cur.next >= 0 {
			sym[cur.next].prev = top.pos
		}
		if cur.prev >= 0 {
			if r, t, ok := m.merges.get(sym[cur.prev].id, cur.id); ok {
				push(heapEntry{rank: r, pos: cur.prev, made: t})
			}
		}
		if cur.next >= 0 {
			if r, t, ok := m.merges.get(cur.id, sym[cur.next].id); ok {
				push(heapEntry{rank: r, pos: top.pos, made: t})
			}
		}
	}
	ids = ids[:0]
	for _, s := range sym {
		if !s.gone {
			ids = append(ids, s.id)
		}
	}
	sc.sym, sc.heap = sym, h
	return ids
}

// wordCache remembers the tokens of recent words. Prompts repeat most of
// their words (and whole system prompts repeat every turn), so most words
// skip the merge loop. It is sharded to keep lock contention low, and a full
// shard is simply emptied: cheap, and the hot words come straight back.
type wordCache struct {
	shards [cacheShards]cacheShard
}

const (
	cacheShards     = 16
	cacheShardLimit = 4096 // words per shard
	cacheMaxWordLen = 256  // longer words are rare and not worth keeping
)

type cacheShard struct {
	mu    sync.RWMutex
	words map[string][]int32
}

func (c *wordCache) shard(word string) *cacheShard {
	// FNV-1a over at most the first 16 bytes picks a shard.
	h := uint32(2166136261)
	for i := 0; i < len(word) && i < 16; i++ {
		h = (h ^ uint32(word[i])) * 16777619
	}
	return &c.shards[h%cacheShards]
}

func (c *wordCache) get(word string) ([]int32, bool) {
	if len(word) > cacheMaxWordLen {
		return nil, false
	}
	s := c.shard(word)
	s.mu.RLock()
	ids, ok := s.words[word]
	s.mu.RUnlock()
	return ids, ok
}

func (c *wordCache) put(word string, ids []int32) {
	if len(word) > cacheMaxWordLen {
		return
	}
	s := c.shard(word)
	s.mu.Lock()
	if s.words == nil || len(s.words) >= cacheShardLimit {
		s.words = make(map[string][]int32, 256)
	}
	// Copy both: word may point into the caller's text, ids into scratch.
	s.words[strings.Clone(word)] = append([]int32(nil), ids...)
	s.mu.Unlock()
}
