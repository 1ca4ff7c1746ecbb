package tokenizer

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"unicode"

	"github.com/clawrl/clawrl/tokenizer/vocab"
)

// FuzzScannerMatchesRegexp checks the hand-written pre-tokenizer scanners
// against regexp2 running the pattern itself, on any input, invalid UTF-8
// included.
func FuzzScannerMatchesRegexp(f *testing.F) {
	for _, s := range []string{
		"Hello world", "it's I'LL we'Ve", "  leading and trailing  ", "a\n\n b\r\n\tc",
		"12345 ١٢٣ Ⅻ ½", "x  \n  y", "\t\tfoo", "(hello) ((x)) !!\n\n", " 'ſ ’s '",
		"你好 世界！ 😀👍🏽", "e\u0301 q\u0301", "\u00a0\u3000x\u2028y", "\xff\xfe bad \xe4\xb8",
		"   ", "\n", "", "'", "' s", "a'", "x \u0085 y", "<|im_start|>user",
	} {
		f.Add(s)
	}
	scanners := []struct {
		name    string
		pattern string
		scanner *wordScanner
	}{
		{"qwen", qwenPattern, &wordScanner{maxDigits: 1}},
		{"llama3", llama3Pattern, &wordScanner{maxDigits: 3}},
	}
	regexps := make([]*regexpMatcher, len(scanners))
	for i, s := range scanners {
		re, err := compileRegexp(s.pattern)
		if err != nil {
			f.Fatal(err)
		}
		regexps[i] = &regexpMatcher{re: re}
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, r := range s {
			if unicode.Is(unicode16Letters, r) || unicode.Is(unicode16Numbers, r) {
				return // regexp2 has Unicode 15.0 tables; the scanners know 16.0
			}
		}
		for i, sc := range scanners {
			got, want := sc.scanner.find(nil, s), regexps[i].find(nil, s)
			if !slices.Equal(got, want) {
				t.Fatalf("%s scanner on %q:\n got %v\nwant %v", sc.name, s, got, want)
			}
		}
	})
}

// TestMergeLinearMatchesHeap checks the short-word merge loop against the
// priority-queue one (Hugging Face's algorithm) on the real Qwen3 merges.
func TestMergeLinearMatchesHeap(t *testing.T) {
	data, _, err := vocab.Files("qwen3")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := FromJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	alphabets := []string{"abcdefghijklmnopqrstuvwxyz", "  \n\t", "=-_*#", "0123456789", "你好世界学习", "éàüß"}
	sc := new(scratch)
	for i := 0; i < 5000; i++ {
		runes := []rune(alphabets[r.IntN(len(alphabets))] + alphabets[r.IntN(len(alphabets))])
		word := make([]rune, 1+r.IntN(80))
		for k := range word {
			word[k] = runes[r.IntN(len(runes))]
		}
		var ids []int32
		for _, b := range []byte(string(word)) {
			ids = append(ids, tok.model.byteID[b])
		}
		linear := slices.Clone(tok.model.mergeLinear(slices.Clone(ids), sc))
		heap := slices.Clone(tok.model.mergeHeap(slices.Clone(ids), sc))
		if !slices.Equal(linear, heap) {
			t.Fatalf("word %q: linear merge %v, heap merge %v", string(word), linear, heap)
		}
	}
}

func TestAppendLossy(t *testing.T) {
	// Expected values are Rust's String::from_utf8_lossy (and Python's
	// bytes.decode("utf-8", "replace"), which agrees).
	tests := []struct {
		in, want string
	}{
		{"plain", "plain"},
		{"\xe4\xb8", "\ufffd"},                           // truncated 3-byte sequence: one replacement
		{"\xe4\xb8x", "\ufffdx"},                         // same, not at the end
		{"\xf0\x80\x80\x80", "\ufffd\ufffd\ufffd\ufffd"}, // overlong: F0 80 is never valid
		{"\xed\xa0\x80", "\ufffd\ufffd\ufffd"},           // surrogate
		{"\xc0\xaf", "\ufffd\ufffd"},
		{"a\xf4\x90\x80\x80", "a\ufffd\ufffd\ufffd\ufffd"},
		{"\xf0\x9f\x98", "\ufffd"},
		{"\xf0\x9f\x98\x80", "😀"},
		{"\x80\xbf", "\ufffd\ufffd"},
		{"\xff", "\ufffd"},
		{"\xe0\xa0\x80\xe0\x80", "\u0800\ufffd\ufffd"},
	}
	for _, tt := range tests {
		got, n := appendLossy(nil, []byte(tt.in), true)
		if string(got) != tt.want || n != len(tt.in) {
			t.Errorf("appendLossy(%q) = %q (%d consumed), want %q", tt.in, got, n, tt.want)
		}
	}
	// Not final: an incomplete sequence at the end waits for more bytes.
	got, n := appendLossy(nil, []byte("ab\xf0\x9f"), false)
	if string(got) != "ab" || n != 2 {
		t.Errorf("appendLossy(not final) = %q, %d; want \"ab\", 2", got, n)
	}
}

func TestSegmentCacheEviction(t *testing.T) {
	var c segmentCache
	short := "too short to cache"
	c.put(short, []int32{1})
	if _, ok := c.get(short); ok {
		t.Error("a short segment was cached")
	}
	seg := func(i int) string {
		b := make([]byte, 1<<20) // 1 MiB each: 32 fit at most
		for k := range b {
			b[k] = byte('a' + k%26)
		}
		return strconv.Itoa(i) + string(b)
	}
	for i := 0; i < 100; i++ {
		c.put(seg(i), []int32{int32(i), 7})
		if c.bytes > segmentCacheMaxBytes {
			t.Fatalf("after %d puts the cache holds %d bytes, over %d", i+1, c.bytes, segmentCacheMaxBytes)
		}
	}
	if ids, ok := c.get(seg(99)); !ok || !slices.Equal(ids, []int32{99, 7}) {
		t.Errorf("newest segment: got %v, %v", ids, ok)
	}
	if _, ok := c.get(seg(0)); ok {
		t.Error("oldest segment survived eviction")
	}
	if len(c.entries) != len(c.order) {
		t.Errorf("%d entries, %d in eviction order", len(c.entries), len(c.order))
	}
}
