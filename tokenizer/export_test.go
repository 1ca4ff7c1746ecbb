package tokenizer

// ClearCacheForTest empties the BPE word cache and the segment cache, for
// cold-cache benchmarks.
func (t *Tokenizer) ClearCacheForTest() {
	for i := range t.model.cache.shards {
		s := &t.model.cache.shards[i]
		s.mu.Lock()
		s.words = nil
		s.mu.Unlock()
	}
	t.segments.clear()
}

// ClearSegmentCacheForTest empties only the segment cache: encoding then
// runs the whole pipeline with warm word cache.
func (t *Tokenizer) ClearSegmentCacheForTest() { t.segments.clear() }
