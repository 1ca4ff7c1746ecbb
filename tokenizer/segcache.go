package tokenizer

import (
	"strings"
	"sync"
)

// segmentCache remembers the tokens of long stretches of text between added
// tokens. Added tokens split the text before anything else happens, so each
// such stretch encodes on its own, and its tokens are a pure function of its
// text. Agents resend the same 20–40k-character system prompt (and the same
// history) every turn; with this cache the repeated stretches cost a hash
// and a comparison instead of a full encode.
type segmentCache struct {
	mu      sync.Mutex
	entries map[string][]int32
	order   []string // insertion order, for eviction
	bytes   int      // sum of key bytes and 4 bytes per id
}

const (
	segmentCacheMinLen   = 1024     // shorter stretches are cheap to encode
	segmentCacheMaxBytes = 32 << 20 // memory the cache may hold
)

func (c *segmentCache) get(segment string) ([]int32, bool) {
	if len(segment) < segmentCacheMinLen {
		return nil, false
	}
	c.mu.Lock()
	ids, ok := c.entries[segment]
	c.mu.Unlock()
	return ids, ok
}

func (c *segmentCache) put(segment string, ids []int32) {
	size := len(segment) + 4*len(ids)
	if len(segment) < segmentCacheMinLen || size > segmentCacheMaxBytes/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = make(map[string][]int32)
	}
	if _, ok := c.entries[segment]; ok {
		return
	}
	for c.bytes+size > segmentCacheMaxBytes && len(c.order) > 0 {
		oldest := c.order[0]
		c.order = c.order[1:]
		c.bytes -= len(oldest) + 4*len(c.entries[oldest])
		delete(c.entries, oldest)
	}
	key := strings.Clone(segment)
	c.entries[key] = append([]int32(nil), ids...)
	c.order = append(c.order, key)
	c.bytes += size
}

func (c *segmentCache) clear() {
	c.mu.Lock()
	c.entries, c.order, c.bytes = nil, nil, 0
	c.mu.Unlock()
}
