package rl

import (
	"strings"
	"unicode"
)

// Loops is shared by the promotion gate (RetentionConfig.Open: a version
// that loops on an open question is not served) and `clawrl bench learn`'s
// simulated users (a looping answer never satisfies), so a version the gate
// lets through is one the benchmark does not score as looping.

// Loop detection: a block of 1 to maxLoopBlock words said loopRepeats times
// in a row, covering at least minLoopWords words.
const (
	maxLoopBlock = 24
	loopRepeats  = 3
	minLoopWords = 6
)

// Loops reports whether an answer repeats itself: the same block of words
// (ignoring case and punctuation) at least three times in a row, six words
// or more in all. "a hat, a hat, a hat" and a sign-off said three times
// loop; "very, very, very good" and a list of different items do not.
// Words are split at punctuation as well as spaces, so a block repeated
// with no space ("TL;DR:TL;DR:TL;DR:…", which `clawrl bench learn`'s tldr
// persona's first-line check reads as one word) loops too.
func Loops(a string) bool {
	var w []string
	for _, f := range strings.FieldsFunc(strings.ToLower(a), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' && r != '’'
	}) {
		if f = strings.Trim(f, "'’"); f != "" {
			w = append(w, f)
		}
	}
	for p := 1; p <= maxLoopBlock && loopRepeats*p <= len(w); p++ {
		// run counts the words since i that equal the word p before them:
		// a block repeated k times in a row is a run of (k−1)·p.
		run := 0
		for i := p; i < len(w); i++ {
			if w[i] != w[i-p] {
				run = 0
				continue
			}
			if run++; run >= (loopRepeats-1)*p && run+p >= minLoopWords {
				return true
			}
		}
	}
	return false
}
