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
	}
	for _, c := range cases {
		if got := Loops(c.text); got != c.want {
			t.Errorf("Loops(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}
