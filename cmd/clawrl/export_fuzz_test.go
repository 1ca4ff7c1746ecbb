package main

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/clawrl/clawrl/store"
)

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC)
	cases := []struct {
		in      string
		want    time.Time
		wantErr bool
	}{
		{"", time.Time{}, false},
		{"2026-11-20T10:00:00Z", time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC), false},
		{"2026-11-20T10:00:00+02:00", time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC), false},
		{"2026-11-20", time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC), false},
		{"90m", now.Add(-90 * time.Minute), false},
		{" 24h ", now.Add(-24 * time.Hour), false},
		{"-1h", time.Time{}, true},
		{"yesterday", time.Time{}, true},
		{"2026-13-01", time.Time{}, true},
	}
	for _, c := range cases {
		got, err := parseSince(c.in, now)
		if (err != nil) != c.wantErr || !got.Equal(c.want) {
			t.Errorf("parseSince(%q) = %v, %v; want %v (error %v)", c.in, got, err, c.want, c.wantErr)
		}
	}
}

func TestParseStates(t *testing.T) {
	got, err := parseStates(" observed, ready,observed ")
	if err != nil || len(got) != 2 || got[0] != store.Observed || got[1] != store.Ready {
		t.Errorf("parseStates = %v, %v", got, err)
	}
	for _, bad := range []string{"observed,,ready", "OBSERVED", "done"} {
		if _, err := parseStates(bad); err == nil {
			t.Errorf("parseStates(%q) succeeded", bad)
		}
	}
}

// FuzzExportFilters: the export's flag parsers take anything a user types;
// they answer with a value or an error naming the input, never a panic, and
// what they accept is sane.
func FuzzExportFilters(f *testing.F) {
	for _, s := range []string{"", "24h", "2026-11-20", "2026-11-20T10:00:00Z", "observed,ready", "-5m", ",", "1e9h"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		if since, err := parseSince(s, now); err != nil {
			if !strings.Contains(err.Error(), "--since") {
				t.Errorf("parseSince(%q) error does not name the flag: %v", s, err)
			}
		} else if d, derr := time.ParseDuration(strings.TrimSpace(s)); derr == nil && since.After(now) {
			t.Errorf("parseSince(%q) (duration %v) = %v, after now", s, d, since)
		}
		states, err := parseStates(s)
		if err == nil {
			seen := map[store.TurnState]bool{}
			for _, st := range states {
				if seen[st] {
					t.Errorf("parseStates(%q) repeated %s", s, st)
				}
				seen[st] = true
			}
		}
	})
}

// FuzzLogprobsJSON: whatever float32 bits a store holds, the exported array
// is valid JSON with one entry per logprob.
func FuzzLogprobsJSON(f *testing.F) {
	f.Add(uint32(0), uint32(0x7f800000), uint32(0xff800000))
	f.Add(uint32(0x7fc00000), uint32(0x00000001), uint32(0xbf000000))
	f.Fuzz(func(t *testing.T, a, b, c uint32) {
		l := logprobs{math.Float32frombits(a), math.Float32frombits(b), math.Float32frombits(c)}
		out, err := json.Marshal(l)
		if err != nil {
			t.Fatalf("marshal %v: %v", l, err)
		}
		var back []*float64
		if err := json.Unmarshal(out, &back); err != nil || len(back) != 3 {
			t.Fatalf("%v marshalled to %s: %v", l, out, err)
		}
		for i, v := range back {
			x := float64(l[i])
			if math.IsNaN(x) || math.IsInf(x, 0) {
				if v != nil {
					t.Errorf("non-finite %v exported as %v", x, *v)
				}
			} else if v == nil || float32(*v) != l[i] {
				t.Errorf("%v exported as %s", l[i], out)
			}
		}
	})
}
