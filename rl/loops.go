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
// in a row, covering at least minLoopWords words; or, inside one word, a
// block of 1 to maxStutterBlock letters said stutterRepeats times in a row,
// covering at least minStutterLetters letters.
const (
	maxLoopBlock = 24
	loopRepeats  = 3
	minLoopWords = 6

	maxStutterBlock   = 8
	stutterRepeats    = 5
	minStutterLetters = 10
)

// Loops reports whether an answer repeats itself: the same block of words
// (ignoring case and punctuation) at least three times in a row, six words
// or more in all. "a hat, a hat, a hat" and a sign-off said three times
// loop; "very, very, very good" and a list of different items do not.
// Words are split at punctuation as well as spaces, so a block repeated
// with no space ("TL;DR:TL;DR:TL;DR:…", which `clawrl bench learn`'s tldr
// persona's first-line check reads as one word) loops too. So does a word
// that stutters, a block of letters said five times or more in a row
// ("TL:TLTLTLTLTLTL…", which the same persona's student wrote at v3 of
// tldr seed 3 under --distill-focus 1), though not a run of digits
// ("0.3333333333" is a right answer).
func Loops(a string) bool {
	var w []string
	for _, f := range strings.FieldsFunc(strings.ToLower(a), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' && r != '’'
	}) {
		if f = strings.Trim(f, "'’"); f != "" {
			if stutters(f) {
				return true
			}
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

// stutters reports whether w holds a block of 1 to maxStutterBlock letters
// said stutterRepeats times in a row, minStutterLetters letters or more in
// all.
func stutters(word string) bool {
	if len(word) < minStutterLetters { // bytes ≥ letters: too short to stutter
		return false
	}
	w := []rune(word)
	for p := 1; p <= maxStutterBlock && stutterRepeats*p <= len(w); p++ {
		run := 0 // letters since i that equal the letter p before them
		for i := p; i < len(w); i++ {
			if w[i] != w[i-p] || !unicode.IsLetter(w[i]) {
				run = 0
				continue
			}
			if run++; run >= (stutterRepeats-1)*p && run+p >= minStutterLetters {
				return true
			}
		}
	}
	return false
}
