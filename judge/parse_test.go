package judge

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseBoxed(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		score int
		ok    bool
	}{
		{"plain one", `The answer helped. \boxed{1}`, 1, true},
		{"minus one", `\boxed{-1}`, -1, true},
		{"zero", `unclear \boxed{0}`, 0, true},
		{"plus one", `\boxed{+1}`, 1, true},
		{"spaces", `\boxed{ -1 }`, -1, true},
		{"unicode minus", `\boxed{−1}`, -1, true},
		{"math dollars", `$\boxed{1}$`, 1, true},
		{"last wins", `first \boxed{1} then on reflection \boxed{-1}`, -1, true},
		{"last garbage wins over earlier valid", `\boxed{1} … \boxed{maybe}`, 0, false},
		{"garbage", `\boxed{good}`, 0, false},
		{"two", `\boxed{2}`, 0, false},
		{"unclosed", `\boxed{1`, 0, false},
		{"none", `I think it is fine.`, 0, false},
		{"empty", ``, 0, false},
		{"nested braces", `\boxed{\text{1}}`, 0, false},
		{"trailing text", `\boxed{1}. Done.`, 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			score, ok := ParseBoxed(tt.text)
			if score != tt.score || ok != tt.ok {
				t.Errorf("ParseBoxed(%q) = %d, %v; want %d, %v", tt.text, score, ok, tt.score, tt.ok)
			}
		})
	}
}

func TestParseHint(t *testing.T) {
	tests := []struct{ name, text, want string }{
		{"simple", "ok [HINT] Use metric units. [/HINT] \\boxed{1}", "Use metric units."},
		{"last pair", "[HINT]a[/HINT] [HINT] second hint [/HINT]", "second hint"},
		{"unclosed last", "[HINT]a[/HINT] [HINT] dangling", ""},
		{"none", "\\boxed{-1}", ""},
		{"multiline", "[HINT]\nLine one.\nLine two.\n[/HINT]", "Line one.\nLine two."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ParseHint(tt.text); got != tt.want {
				t.Errorf("ParseHint(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}

func TestMajority(t *testing.T) {
	tests := []struct {
		votes  []int
		want   int
		reason string
	}{
		{nil, 0, "no valid vote"},
		{[]int{1}, 1, "majority"},
		{[]int{1, 1, -1}, 1, "majority"},
		{[]int{-1, -1, 1}, -1, "majority"},
		{[]int{1, -1}, 0, "tie"},
		{[]int{1, -1, 0}, 0, "tie"},
		{[]int{0, 0, 1}, 0, "majority"},
		{[]int{1, 1, -1, -1, 0}, 0, "tie"},
	}
	for _, tt := range tests {
		got, reason := Majority(tt.votes)
		if got != tt.want || reason != tt.reason {
			t.Errorf("Majority(%v) = %d (%s), want %d (%s)", tt.votes, got, reason, tt.want, tt.reason)
		}
	}
}

func FuzzParseBoxed(f *testing.F) {
	for _, s := range []string{`\boxed{1}`, `\boxed{ -1 }`, `\boxed{+1}`, `\boxed{{}`, `\boxed{`, `}\boxed{0}{`, "\\boxed{\xff}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		score, ok := ParseBoxed(text)
		if score < -1 || score > 1 {
			t.Fatalf("score %d out of range for %q", score, text)
		}
		if !ok && score != 0 {
			t.Fatalf("invalid parse returned score %d for %q", score, text)
		}
		if ok && !strings.Contains(text, `\boxed{`) {
			t.Fatalf("valid parse without a box in %q", text)
		}
		// Appending a later valid box always decides.
		if s2, ok2 := ParseBoxed(text + ` \boxed{-1}`); !ok2 || s2 != -1 {
			// An unclosed brace inside the fuzzed text cannot swallow the
			// appended box: LastIndex finds the appended one.
			t.Fatalf("appended box not decisive after %q: %d %v", text, s2, ok2)
		}
	})
}

func FuzzParseHint(f *testing.F) {
	for _, s := range []string{"[HINT]x[/HINT]", "[HINT][HINT][/HINT]", "[/HINT][HINT]", "[HINT]\xff[/HINT]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		h := ParseHint(text)
		if h != "" && !strings.Contains(text, h) {
			t.Fatalf("hint %q not part of %q", h, text)
		}
		if strings.Contains(h, HintStart) {
			t.Fatalf("hint %q contains a start marker", h)
		}
		if utf8.ValidString(text) && !utf8.ValidString(h) {
			t.Fatalf("hint of valid text is invalid UTF-8: %q", h)
		}
	})
}
