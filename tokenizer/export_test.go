package tokenizer

// ClearCacheForTest empties the BPE word cache, for cold-cache benchmarks.
func (t *Tokenizer) ClearCacheForTest() {
	for i := range t.model.cache.shards {
		s := &t.model.cache.shards[i]
		s.mu.Lock()
		s.words = nil
		s.mu.Unlock()
	}
}
