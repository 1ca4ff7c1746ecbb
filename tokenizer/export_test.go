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

// NormalizeForTest applies the tokenizer's normalizer (Hugging Face's NFC,
// with Unicode 9.0 data, for Qwen) to s.
func (t *Tokenizer) NormalizeForTest(s string) string {
	if t.normalizer == nil {
		return s
	}
	return t.normalizer.normalize(s)
}
