package judge

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine/scripted"
	"github.com/clawrl/clawrl/store"
)

// scorerBackend is a judge model whose next-token preferences are given: the
// margin log p(1) − log p(-1) of a prompt is margins[the user's next message]
// (the neutral reference has none), and every call is counted.
type scorerBackend struct {
	mu          sync.Mutex
	margins     map[string]float64
	neutral     float64
	prefills    int
	completions int
	hint        string
}

func (s *scorerBackend) Name() string { return "scorer" }

func (s *scorerBackend) Complete(ctx context.Context, msgs []chat.Message, p Params) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.completions++
	return s.hint, nil
}

func (s *scorerBackend) NextLogprobs(ctx context.Context, msgs []chat.Message, begun string, candidates []string) ([]float64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prefills++
	if begun != `\boxed{` || len(candidates) != 3 {
		panic("unexpected verdict request")
	}
	m, found := s.neutral, false
	for next, v := range s.margins {
		if strings.Contains(msgs[len(msgs)-1].Content, next) {
			m, found = v, true
		}
	}
	if !found && !strings.Contains(msgs[len(msgs)-1].Content, "(nothing)") {
		panic("prompt holds neither a scripted next message nor the neutral reference")
	}
	// log p(1) = -0.3 always; log p(-1) moves with the margin.
	return []float64{-0.3, -3, -0.3 - m}, nil
}

func inputWithNext(next string) Input {
	in := testInput()
	in.Next = []chat.Message{{Role: chat.RoleUser, Content: next}}
	return in
}

// TestPrefillVerdictCalibrated: a judge that favours 1 for everything still
// separates thanks from complaints once its margin is compared with the
// neutral reference's, from prefills only (no sampled answer).
func TestPrefillVerdictCalibrated(t *testing.T) {
	b := &scorerBackend{neutral: 1.2, margins: map[string]float64{
		"Thanks, perfect.":                1.5,
		"Too long, give me the short one": 0.9,
		"Hmm, so what now?":               1.22,
	}}
	j := New(b, Config{Threshold: 0.1, NoGeneratedHints: true}, quietLog())
	for next, want := range map[string]int{"Thanks, perfect.": 1, "Too long, give me the short one": -1, "Hmm, so what now?": 0} {
		got, err := j.Judge(context.Background(), inputWithNext(next), Request{Score: true, Hint: true})
		if err != nil {
			t.Fatal(err)
		}
		if got.Score != want {
			t.Errorf("%q: score %d, want %d (%+v)", next, got.Score, want, got.Votes)
		}
		// A -1 verdict on a user's next message makes it the hint.
		if wantHint := want < 0; got.HintAccepted != wantHint || (wantHint && got.Hint != next) {
			t.Errorf("%q: hint %q accepted %v", next, got.Hint, got.HintAccepted)
		}
		if !strings.Contains(got.Votes[0].Raw, "neutral reference margin 1.200") {
			t.Errorf("%q: vote does not say how it was read: %q", next, got.Votes[0].Raw)
		}
	}
	if b.completions != 0 || b.prefills != 6 {
		t.Errorf("%d sampled answers and %d prefills, want 0 and 6 (case + reference per turn)", b.completions, b.prefills)
	}
}

// TestRunningCalibration compares each margin with the mean of the earlier
// ones: the first verdict is unclear, then the lower margin is the complaint.
func TestRunningCalibration(t *testing.T) {
	b := &scorerBackend{margins: map[string]float64{"good answer, thanks": 1.5, "bad answer, too long": 0.9}}
	j := New(b, Config{Calibration: CalibrateRunning, Threshold: 0.1, NoGeneratedHints: true}, quietLog())
	want := []int{0, -1, 1, -1}
	for i, next := range []string{"good answer, thanks", "bad answer, too long", "good answer, thanks", "bad answer, too long"} {
		got, err := j.Judge(context.Background(), inputWithNext(next), Request{Score: true})
		if err != nil {
			t.Fatal(err)
		}
		if got.Score != want[i] {
			t.Errorf("turn %d %q: score %d, want %d", i, next, got.Score, want[i])
		}
	}
	if b.prefills != 4 {
		t.Errorf("%d prefills, want one per turn", b.prefills)
	}
}

// TestWrittenFeedbackIsTheHint: a rating decides the score and written
// feedback is the hint, with no call to the judge model at all.
func TestWrittenFeedbackIsTheHint(t *testing.T) {
	b := &scorerBackend{}
	j := New(b, Config{}, quietLog())
	in := inputWithNext("unused")
	in.FeedbackRating, in.FeedbackText = -1, "Too long. Answer in two or three plain sentences."
	got, err := j.Judge(context.Background(), in, Request{Score: true, Hint: true})
	if err != nil {
		t.Fatal(err)
	}
	if got.Score != -1 || got.Hint != in.FeedbackText || !got.HintAccepted {
		t.Errorf("judgment %+v", got)
	}
	if b.prefills+b.completions != 0 {
		t.Errorf("the judge model was asked %d times", b.prefills+b.completions)
	}
	// A bare rating has no next state to read a hint from: no call either.
	bare := testInput()
	bare.Next, bare.NextKind, bare.FeedbackRating = nil, store.NextFeedback, 1
	if got, err := j.Judge(context.Background(), bare, Request{Score: true, Hint: true}); err != nil || got.Score != 1 || got.HintAccepted {
		t.Errorf("bare rating: %+v %v", got, err)
	}
	if b.prefills+b.completions != 0 {
		t.Errorf("a bare rating asked the judge model %d times", b.prefills+b.completions)
	}
	// The hint vote survives rescoring (feedback that arrives later).
	_, _, votes := j.Rescore(got.Votes, 1, "")
	found := false
	for _, v := range votes {
		found = found || (v.Kind == store.VoteHint && v.Hint == in.FeedbackText)
	}
	if !found {
		t.Errorf("rescoring lost the written hint: %+v", votes)
	}
}

// TestNextHintAlways makes any user next message the hint without a verdict
// when only hints are wanted.
func TestNextHintAlways(t *testing.T) {
	b := &scorerBackend{}
	j := New(b, Config{NextHint: NextHintAlways}, quietLog())
	got, err := j.Judge(context.Background(), inputWithNext("in two sentences please"), Request{Hint: true})
	if err != nil {
		t.Fatal(err)
	}
	if got.Hint != "in two sentences please" || b.prefills+b.completions != 0 {
		t.Errorf("hint %q after %d calls", got.Hint, b.prefills+b.completions)
	}
}

// TestGeneratedHintBounded: with no written hint, the hint vote is generated
// with at most HintTokens tokens and stops at the end marker; the box that
// would follow it is not waited for.
func TestGeneratedHintBounded(t *testing.T) {
	eng := scripted.New(scripted.Options{})
	b := &EngineBackend{Engine: eng}
	j := New(b, Config{Verdict: VerdictVotes, EvalVotes: 1, Retries: NoRetries}, quietLog())
	in := inputWithNext(`[[say:[HINT] Give kilometres with two decimals. [/HINT] and then a long tail that never ends \boxed{1}]]`)
	in.NextKind = store.NextTool // not a user message: the hint must be generated
	got, err := j.Judge(context.Background(), in, Request{Hint: true})
	if err != nil {
		t.Fatal(err)
	}
	if got.Hint != "Give kilometres with two decimals." {
		t.Fatalf("hint %q, votes %+v", got.Hint, got.Votes)
	}
	if raw := got.Votes[len(got.Votes)-1].Raw; strings.Contains(raw, "tail") || !strings.HasSuffix(raw, HintEnd) {
		t.Errorf("generation did not stop at the end marker: %q", raw)
	}

	// A judge that rambles is cut at HintTokens and not retried.
	in = inputWithNext(`[[say:` + strings.Repeat("blah ", 400) + `]]`)
	in.NextKind = store.NextTool
	j = New(b, Config{HintTokens: 16, Retries: 3}, quietLog())
	got, err = j.Judge(context.Background(), in, Request{Hint: true})
	if err != nil {
		t.Fatal(err)
	}
	v := got.Votes[len(got.Votes)-1]
	if got.HintAccepted || len(v.Raw) > 16 || strings.Contains(v.Err, "attempt") {
		t.Errorf("unbounded or retried hint vote: %+v", v)
	}
}

// TestEngineNextLogprobs reads the verdict of a scripted judge from one
// generation step: the begun `\boxed{` is continued by the scripted answer.
func TestEngineNextLogprobs(t *testing.T) {
	eng := scripted.New(scripted.Options{})
	b := &EngineBackend{Engine: eng}
	for text, want := range map[string]int{`[[say:\boxed{-1}]] no`: -1, `[[say:\boxed{1}]] yes`: 1} {
		j := New(b, Config{Calibration: CalibrateNeutral, NoGeneratedHints: true}, quietLog())
		got, err := j.Judge(context.Background(), inputWithNext(text), Request{Score: true})
		if err != nil {
			t.Fatal(err)
		}
		if got.Score != want {
			t.Errorf("%q: score %d, want %d: %+v", text, got.Score, want, got.Votes)
		}
	}
}

// TestHTTPStopKeepsMarker: an OpenAI server cuts the stop string off; the
// backend puts it back so the hint parses.
func TestHTTPStopKeepsMarker(t *testing.T) {
	var stop []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Stop []string `json:"stop"`
		}
		body, _ := io.ReadAll(r.Body)
		json.Unmarshal(body, &req)
		stop = req.Stop
		io.WriteString(w, `{"choices":[{"finish_reason":"stop","message":{"content":"[HINT] Use kilometres with two decimals."}}]}`)
	}))
	defer srv.Close()
	j := New(&HTTPBackend{URL: srv.URL, Model: "m"}, Config{}, quietLog())
	in := inputWithNext("ok")
	in.NextKind = store.NextTool
	got, err := j.Judge(context.Background(), in, Request{Hint: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(stop) != 1 || stop[0] != HintEnd || got.Hint != "Use kilometres with two decimals." {
		t.Errorf("stop %q, hint %q", stop, got.Hint)
	}
}
