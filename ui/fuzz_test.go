package ui

import (
	"strings"
	"testing"
)

// FuzzParseBench feeds result files of any shape to the bench loader: it
// returns arms or an error, never panics, and every proportion it keeps is
// within [0, 1].
func FuzzParseBench(f *testing.F) {
	f.Add([]byte(`{"summary":[{"arm":"combine","cells":[{"round":0,"satisfied":{"k":1,"n":2,"p":0.5,"low":0.1,"high":0.9}}]}]}`))
	f.Add([]byte(`[{"arm":"rl","cells":[{"round":1,"retention":{"p":1.5}}]}]`))
	f.Add([]byte(`{"arms":[{"arm":"x","cells":[]}]}`))
	f.Add([]byte(`[`))
	f.Add([]byte(`{"summary":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		arms, err := parseBench(b)
		if err != nil {
			return
		}
		if len(arms) == 0 {
			t.Fatal("no arms and no error")
		}
		for _, a := range arms {
			if a.Arm == "" || len(a.Cells) == 0 {
				t.Fatalf("kept an empty arm %+v", a)
			}
			for _, c := range a.Cells {
				for _, p := range []*proportion{c.Satisfied, c.Retention} {
					if p != nil && (p.P < 0 || p.P > 1 || p.Low < 0 || p.High > 1) {
						t.Fatalf("kept proportion %+v", p)
					}
				}
			}
		}
	})
}

// FuzzSessionCursor checks the session list's page cursor: whatever a
// client sends is a cursor or a clear error, and a cursor round-trips.
func FuzzSessionCursor(f *testing.F) {
	f.Add("1795488231000000000.sess-abc")
	f.Add("nope")
	f.Add("12.")
	f.Add("-5.x.y")
	f.Fuzz(func(t *testing.T, c string) {
		at, id, err := parseSessionCursor(c)
		if err != nil {
			if !strings.Contains(err.Error(), "cursor") {
				t.Fatalf("error %q does not say what was wrong", err)
			}
			return
		}
		if id == "" {
			t.Fatalf("cursor %q: empty id", c)
		}
		back := strings.TrimPrefix(c, "+")
		if got := formatCursor(at.UnixNano(), id); got != back && !strings.HasPrefix(back, "0") && !strings.HasPrefix(back, "-0") {
			t.Fatalf("cursor %q round-trips as %q", c, got)
		}
	})
}
