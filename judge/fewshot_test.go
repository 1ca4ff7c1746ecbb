package judge

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/store"
)

// labelScorer answers a few-shot prompt with given label logprobs (1, 0, -1)
// per reply, and any other prompt (a zero-shot verdict) with a fixed
// preference for 1; it counts both kinds.
type labelScorer struct {
	mu               sync.Mutex
	replies          map[string][]float64
	fewShot, prefill int
}

func (s *labelScorer) Name() string { return "labels" }

func (s *labelScorer) Complete(ctx context.Context, msgs []chat.Message, p Params) (string, error) {
	return "", nil
}

func (s *labelScorer) NextLogprobs(ctx context.Context, msgs []chat.Message, begun string, candidates []string) ([]float64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	last := msgs[len(msgs)-1].Content
	if msgs[0].Content == fewShotSystem {
		s.fewShot++
		if len(msgs) != 2+2*len(fewShotDemos) || !strings.HasPrefix(last, "Reply: ") {
			panic("malformed few-shot prompt")
		}
		lp, ok := s.replies[strings.TrimPrefix(last, "Reply: ")]
		if !ok {
			panic("unscripted reply " + last)
		}
		return lp, nil
	}
	s.prefill++
	return []float64{-0.3, -3, -2}, nil
}

// TestFewShotVerdict: a user's next message is read by the few-shot prompt,
// the likeliest label (neutral raised by its bias) winning by more than the
// threshold; a correction
// becomes the hint as it stands. A tool result, and a turn with written
// feedback, are read by the zero-shot prefill instead.
func TestFewShotVerdict(t *testing.T) {
	b := &labelScorer{replies: map[string][]float64{
		"Too wordy, cut it down.": {-0.9, -3.5, -0.5},
		"Thank you, that helps.":  {-0.4, -3.5, -1.3},
		"Where do penguins live?": {-1.0, -0.8, -1.2},
		"Hmm, OK I guess, maybe?": {-0.70, -3, -0.72},
		// −1 by the raw log-probabilities; 0 with the neutral bias.
		"And what about Spain?": {-0.8, -1.5, -0.6},
	}}
	j := New(b, Config{Verdict: VerdictFewShot, Threshold: 0.05, NoGeneratedHints: true}, quietLog())
	want := map[string]int{"Too wordy, cut it down.": -1, "Thank you, that helps.": 1, "Where do penguins live?": 0, "Hmm, OK I guess, maybe?": 0, "And what about Spain?": 0}
	for next, score := range want {
		got, err := j.Judge(context.Background(), inputWithNext(next), Request{Score: true, Hint: true})
		if err != nil {
			t.Fatal(err)
		}
		if got.Score != score {
			t.Errorf("%q: score %d, want %d (%+v)", next, got.Score, score, got.Votes)
		}
		if wantHint := score < 0; got.HintAccepted != wantHint || (wantHint && got.Hint != next) {
			t.Errorf("%q: hint %q accepted %v", next, got.Hint, got.HintAccepted)
		}
		if !strings.HasPrefix(got.Votes[0].Raw, "few-shot verdict") {
			t.Errorf("%q: vote does not say how it was read: %q", next, got.Votes[0].Raw)
		}
	}
	if b.fewShot != len(want) || b.prefill != 0 {
		t.Fatalf("%d few-shot and %d zero-shot prefills, want %d and 0", b.fewShot, b.prefill, len(want))
	}

	tool := inputWithNext("ok")
	tool.Next, tool.NextKind = []chat.Message{{Role: chat.RoleTool, Content: "exit 0"}}, store.NextTool
	written := inputWithNext("Too wordy, cut it down.")
	written.FeedbackText = "Please be brief."
	for _, in := range []Input{tool, written} {
		if _, err := j.Judge(context.Background(), in, Request{Score: true}); err != nil {
			t.Fatal(err)
		}
	}
	// Each zero-shot verdict prefills the case and its neutral reference.
	if b.fewShot != len(want) || b.prefill != 4 {
		t.Errorf("tool result and written feedback: %d few-shot and %d zero-shot prefills, want %d and 4", b.fewShot, b.prefill, len(want))
	}
}
