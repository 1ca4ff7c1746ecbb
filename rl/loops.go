package rl

import (
	"strings"
	"unicode"
	"unicode/utf8"
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
func Loops(a string) bool { return LoopStart(a) >= 0 }

// LoopStart is where answer a's loop begins (Loops), as a byte offset into
// a: the start of the first word said again in the repeated block (a[:k]
// says the block once and does not loop), or of the first word that
// stutters; −1 when a does not loop. "Les arbres sont en fleurs, les
// arbres sont en fleurs, les arbres sont en fleurs" begins its loop at
// the second "les".
func LoopStart(a string) int {
	type word struct {
		w     string
		start int
	}
	var ws []word
	cut := -1
	for i := 0; i < len(a); {
		r, n := utf8.DecodeRuneInString(a[i:])
		if !inWord(r) {
			i += n
			continue
		}
		j := i
		for j < len(a) {
			r, n := utf8.DecodeRuneInString(a[j:])
			if !inWord(r) {
				break
			}
			j += n
		}
		f := a[i:j]
		start := i + len(f) - len(strings.TrimLeft(f, "'’"))
		i = j
		f = strings.ToLower(strings.Trim(f, "'’"))
		if f == "" {
			continue
		}
		if stutters(f) {
			cut = start
			break
		}
		ws = append(ws, word{f, start})
	}
	for p := 1; p <= maxLoopBlock && loopRepeats*p <= len(ws); p++ {
		// run counts the words since i that equal the word p before them:
		// a block repeated k times in a row is a run of (k−1)·p.
		run := 0
		for i := p; i < len(ws); i++ {
			if ws[i].w != ws[i-p].w {
				run = 0
				continue
			}
			if run++; run >= (loopRepeats-1)*p && run+p >= minLoopWords {
				if s := ws[i-run+1].start; cut < 0 || s < cut {
					cut = s
				}
				break
			}
		}
	}
	return cut
}

// inWord: the runes of a word, as Loops splits an answer.
func inWord(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' || r == '’' }

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
