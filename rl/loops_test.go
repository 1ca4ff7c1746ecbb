package rl

import "testing"

func TestLoops(t *testing.T) {
	cases := []struct {
		text string
		want bool
	}{
		{"Pack a towel, a hat, a hat, a hat.", true},
		{"Done. Hope this helps! Hope this helps! Hope this helps!", true},
		{"very very very very very very", true},
		{"Pack a pair of jeans, a pair of hiking poles, a pair of hiking shoes, a pair of hiking poles, a pair of hiking shoes, a pair of hiking poles, a pair of hiking shoes", true},
		{"Done. Hope this helps! Hope this helps!", false}, // twice is not a loop (SignsOff refuses it)
		{"It is very, very, very good.", false},            // three words in all
		{"Pack a pair of jeans, a pair of sneakers, a pair of sunglasses and a hat.", false},
		{"Boil it for 7 minutes.\n\nHope this helps!", false},
		{"1. Wash. 2. Rinse. 3. Dry. 4. Fold.", false},
		{"", false},
		// what the tldr persona's student said at v3 (seed 1, 1.5B): one
		// whitespace-separated word, the first line's check passed it
		{"TL;DR:TL;DR:TL;DR:TL;DR:TL;DR:TL;DR:TL;DR:TL;DR:TL;DR:TL;TL;DR:TL;TL;TL;TL;", true},
		{"TL;DR:tl;dr:TL;dr:TL;dr:TL;dr:TL;dr:", true},
		{"TL;DR: Earthquakes are caused by the shifting of tectonic plates.", false},
		{"Don't, don't, don't.", false}, // three words in all
		// v3 of tldr seed 3 under --distill-focus 1 (1.5B): a word that
		// stutters, cut off at the token limit
		{"TL;DR: A car engine uses pistons to compress and ignite fuel.\n\nTL:TLTLTLTLTLTLTLTLTLTLTLTL", true},
		{"TL;DRTLTLTLTLTL", true},
		{"zzzzzzzzzz", true},
		{"zzzzzzzzz", false},                  // nine letters
		{"hahaha, that is a good one", false}, // three times
		{"1/3 is 0.3333333333.", false},       // digits
		{"The Mississippi is long.", false},
		{"Ich habe Donaudampfschifffahrtsgesellschaftskapitän gelesen.", false},
	}
	for _, c := range cases {
		if got := Loops(c.text); got != c.want {
			t.Errorf("Loops(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}

func TestLoopStart(t *testing.T) {
	for _, c := range []struct{ text, before string }{
		// the french seed 8 teacher's loop (bench/results/2026-12-06-seeds7)
		{"Au printemps, les arbres sont en fleurs, les fleurs sont en fleurs, les arbres sont en fleurs, les fleurs sont en fleurs, les arbres sont en fleurs, les fleurs sont en fleurs, les arbres",
			"Au printemps, les arbres sont en fleurs, les fleurs sont en fleurs, "},
		{"Pack a towel, a hat, a hat, a hat.", "Pack a towel, a hat, "},
		{"Done. Hope this helps! Hope this helps! Hope this helps!", "Done. Hope this helps! "},
		{"TL;DR: A car engine uses pistons.\n\nTL:TLTLTLTLTLTLTLTLTLTLTLTL", "TL;DR: A car engine uses pistons.\n\nTL:"},
		{"'Tis it, 'tis it, 'tis it, 'tis it", "'Tis it, '"},
		{"Boil it for 7 minutes. Hope this helps!", ""},
	} {
		k := LoopStart(c.text)
		if c.before == "" {
			if k != -1 {
				t.Errorf("LoopStart(%q) = %d, want -1", c.text, k)
			}
			continue
		}
		if k < 0 || c.text[:k] != c.before {
			t.Errorf("LoopStart(%q) = %d, want %d (before it %q)", c.text, k, len(c.before), c.before)
		}
	}
}

// FuzzLoops runs the loop check on any text a model may write: it never
// panics, and a loop stays a loop when more words follow it.
func FuzzLoops(f *testing.F) {
	for _, s := range []string{"Hope this helps! Hope this helps! Hope this helps!", "TL:TLTLTLTLTLTL", "0.3333333333", "très très très bien", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, a string) {
		if Loops(a) && !Loops(a+" and then some more") {
			t.Errorf("Loops(%q) but not with words after it", a)
		}
		// What comes before the loop's start does not loop.
		if k := LoopStart(a); k < -1 || k > len(a) || (k >= 0) != Loops(a) || (k >= 0 && Loops(a[:k])) {
			t.Errorf("LoopStart(%q) = %d (Loops %v)", a, k, Loops(a))
		}
	})
}
