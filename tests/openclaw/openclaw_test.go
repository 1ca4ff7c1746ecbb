package openclaw

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const (
	// sessionID is the --session-id OpenClaw gets: the warm start's prompts
	// (testdata/capture-lean) were recorded with it too.
	sessionID = "s1"
	// trainedTimeout bounds the wait for a rated turn to be trained.
	trainedTimeout = 10 * time.Minute
	// The names of what the scenario asks for.
	workspaceFile = "notes.txt"
	feedbackText  = "right tool, right answer"
)

// The user messages of the scenario, in order, and the compaction epoch each
// is sent in (the compaction comes between the second and the third).
var (
	userMessages = []string{"Please list files in the workspace.", "Thanks. Now list files once more.", "After the summary: list files again."}
	userEpochs   = []int{0, 0, 1}
)

// TestOpenClawDrivesClawrl runs a stock OpenClaw against `clawrl serve` on a
// tiny checkpoint and checks what clawrl recorded: one session across a
// compaction, main and side turns told apart, tool rounds answered by the
// model and paired with their results, token ids and logprobs kept, nothing
// trained from the side turn, and a /v1/feedback rating trained into a new
// policy version.
func TestOpenClawDrivesClawrl(t *testing.T) {
	tc := installToolchain(t)
	bin := buildClawrl(t)

	base := filepath.Join(t.TempDir(), "base")
	clawrl(t, bin, 2*time.Minute, "model", "new", "--arch", "qwen3", "--size", "tiny", "--seed", "7", "--out", base)
	ocRoot := t.TempDir()
	m, now := thisMachine(t, tc), time.Now()
	policy, taughtPrompts := warmStart(t, bin, base, ocRoot, m, now)
	good, total := probeWarmStart(t, bin, policy, ocRoot, m, now, probeClockTimes(t))
	t.Logf("warm start probe: %d of %d requests, at clock times not taught, answered as taught", good, total)

	// The learning loop runs as a user would run it, with knobs that make a
	// CPU test quick: one sample per step, a short judge, ratings decide.
	srv := startServe(t, bin, policy, t.TempDir(),
		"--method", "rl", "--feedback", "decide", "--batch-size", "1",
		"--judge-votes", "1", "--judge-max-tokens", "8")

	zero := 0.0
	oc := newOpenClaw(t, tc, ocRoot, providerConfig{
		BaseURL: srv.BaseURL + "/v1", APIKey: "clawrl-e2e", ModelID: "tiny",
		Context: 32768, MaxTokens: 64, Temperature: &zero, LeanAgent: true,
	})
	if err := os.MkdirAll(oc.workspace, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(oc.workspace, workspaceFile), []byte("clawrl end-to-end\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	oc.startGateway(t)

	// Two turns, each asking for a tool round; a compaction; one more turn
	// in the compacted conversation.
	for i, msg := range userMessages {
		if i > 0 && userEpochs[i] > userEpochs[i-1] {
			c := oc.compact(t, sessionKey(sessionID))
			t.Logf("compaction summary: %.200q", c.Result.Summary)
		}
		r, incomplete := oc.agent(t, sessionID, msg)
		if incomplete {
			// OpenClaw found the answer unusable even after its own retry.
			// The requests were recorded: checkRecorded still walks them
			// and says which answer went wrong.
			t.Errorf("OpenClaw gave up on the turn %q (incomplete_turn): the warm-started model answered something unusable", msg)
			continue
		}
		t.Logf("turn %q → %q", msg, r.text())
	}

	// Rate the last answer, as a user would.
	if err := srv.call(http.MethodPost, "/v1/feedback", nil,
		map[string]any{"session_id": sessionID, "rating": 1, "text": feedbackText}, nil); err != nil {
		t.Fatalf("feedback: %v", err)
	}

	turns := export(t, bin, srv.DataDir)
	explainDrift(t, filepath.Join(base, "tokenizer.json"), taughtPrompts, turns)
	checkRecorded(t, turns)
	checkTrained(t, bin, srv)
}

// checkRecorded asserts what clawrl stored about the conversation.
func checkRecorded(t *testing.T, turns []exportedTurn) {
	t.Helper()
	var lines []string
	for _, tr := range turns {
		lines = append(lines, tr.summary())
	}
	dump := strings.Join(lines, "\n")
	t.Logf("recorded turns:\n%s", dump)

	// One session, recognised by OpenClaw's affinity header and exported
	// under OpenClaw's own session id.
	var main, side []exportedTurn
	for _, tr := range turns {
		if tr.SessionID != sessionID || tr.InternalSessionID != turns[0].InternalSessionID || tr.SessionKey != sessionID {
			t.Errorf("turn %s is in session %s (internal %s, key %q), want all in one session %q\n%s",
				tr.ID, tr.SessionID, tr.InternalSessionID, tr.SessionKey, sessionID, dump)
		}
		switch tr.Type {
		case "main":
			main = append(main, tr)
		case "side":
			side = append(side, tr)
		default:
			t.Errorf("turn %s has type %q", tr.ID, tr.Type)
		}
		// Token ids and behaviour logprobs of exactly what was sampled.
		if len(tr.PromptIDs) == 0 || len(tr.ResponseIDs) == 0 {
			t.Errorf("turn %s: %d prompt ids, %d response ids", tr.ID, len(tr.PromptIDs), len(tr.ResponseIDs))
		}
		if len(tr.BehaviourLogprobs) != len(tr.ResponseIDs) {
			t.Errorf("turn %s: %d logprobs for %d response ids", tr.ID, len(tr.BehaviourLogprobs), len(tr.ResponseIDs))
		}
		for i, lp := range tr.BehaviourLogprobs {
			if lp == nil || math.IsNaN(*lp) || *lp > 0 {
				t.Errorf("turn %s: logprob %d = %v, want a finite value ≤ 0", tr.ID, i, lp)
				break
			}
		}
	}
	if t.Failed() {
		return
	}

	// The compaction is the one side turn; it is never trained.
	if len(side) != 1 {
		t.Fatalf("%d side turns, want 1 (the compaction)\n%s", len(side), dump)
	}
	comp := side[0]
	if len(comp.Messages) == 0 || !strings.Contains(comp.Messages[0].Content, "context summarization assistant") || len(comp.Tools) != 0 {
		t.Errorf("side turn is not the compaction: %s", comp.summary())
	}
	switch comp.State {
	case "ready", "trained":
		t.Errorf("side turn reached state %s: a side turn must never become a sample", comp.State)
	}
	// The learning loop annotates judged turns (score, votes) and sampled
	// ones (sample); a side turn gets neither.
	for _, k := range []string{"sample", "score", "votes"} {
		if v, ok := comp.Raw[k]; ok && string(v) != "null" {
			t.Errorf("side turn has %s %s: it was judged or sampled", k, v)
		}
	}

	// Walk the main turns with the user messages that caused them: a turn
	// that called a tool is followed by another turn for the same message
	// (after the tool result); a text answer ends the message's turns.
	toolRounds, retries := make([]int, len(userMessages)), 0
	prevRetried := false
	msg := 0
	for i, tr := range main {
		if msg >= len(userMessages) {
			t.Fatalf("main turn %d answers no user message (all %d were answered before it)\n%s", i, len(userMessages), dump)
		}
		if wantEpoch := userEpochs[msg]; tr.Epoch != wantEpoch {
			t.Errorf("main turn %d (for %q): epoch %d, want %d", i, userMessages[msg], tr.Epoch, wantEpoch)
		}
		if len(tr.ToolCalls) > 0 {
			// The model called ls; the call's result is the next state.
			if len(tr.ToolCalls) != 1 || tr.ToolCalls[0].Function.Name != "ls" {
				t.Errorf("main turn %d: tool calls %+v, want one call of ls", i, tr.ToolCalls)
			}
			if tr.NextStateKind != "tool" || len(tr.NextState) == 0 || tr.NextState[0].Role != "tool" ||
				!strings.Contains(tr.NextState[0].Content, workspaceFile) {
				t.Errorf("main turn %d: next state %s %+v, want the ls result naming %s", i, tr.NextStateKind, tr.NextState, workspaceFile)
			} else {
				toolRounds[msg]++
			}
			continue
		}
		// OpenClaw retries a turn whose answer it cannot use (an empty reply,
		// a malformed tool call) with a nudge of its own: that request is the
		// next state, a user message that is not the scripted next one.
		if tr.NextStateKind == "user" && len(tr.NextState) > 0 {
			last := tr.NextState[len(tr.NextState)-1].Content
			if msg+1 >= len(userMessages) || !strings.Contains(last, userMessages[msg+1]) {
				prevRetried = true
				retries++
				t.Logf("main turn %d (%.60q) was retried by OpenClaw with %.80q", i, tr.ResponseText, last)
				if retries > 4 {
					t.Errorf("more than 4 OpenClaw retries\n%s", dump)
				}
				continue
			}
		}
		// The answer to OpenClaw's retry of a turn it then gave up on
		// (incomplete_turn): OpenClaw drops that turn from later history, so
		// nothing pairs with it; the next user message starts afresh.
		if prevRetried && tr.NextStateKind == "" && msg+1 < len(userMessages) {
			prevRetried = false
			t.Logf("main turn %d (%.60q) answered a retry OpenClaw gave up on; not in later history", i, tr.ResponseText)
			msg++
			continue
		}
		prevRetried = false
		// A text answer: its next state is the user's next message (across
		// the compaction too); only the rating follows the last one.
		msg++
		if msg == len(userMessages) {
			if i != len(main)-1 {
				t.Errorf("main turn %d answered the last message, but %d more main turns follow\n%s", i, len(main)-1-i, dump)
			}
			if tr.Feedback == nil || tr.Feedback.Rating != 1 || tr.Feedback.Text != feedbackText {
				t.Errorf("last main turn: feedback %+v, want rating 1 with %q", tr.Feedback, feedbackText)
			}
			continue
		}
		next := userMessages[msg]
		if tr.NextStateKind != "user" || len(tr.NextState) == 0 || !strings.Contains(tr.NextState[len(tr.NextState)-1].Content, next) {
			t.Errorf("main turn %d: next state %s %+v, want the user's %q", i, tr.NextStateKind, tr.NextState, next)
		}
	}
	if msg != len(userMessages) {
		t.Errorf("the main turns answered %d of %d user messages\n%s", msg, len(userMessages), dump)
	}
	// The point of the warm start: the model, not a script, calls the tool,
	// for each of the three messages (each asks for a listing).
	for i, n := range toolRounds {
		if n == 0 {
			t.Errorf("the model made no tool round for %q\n%s", userMessages[i], dump)
		}
	}
	t.Logf("tool rounds made by the model, per user message: %v", toolRounds)
}

// checkTrained waits (bounded) until the rated turn has been trained into a
// published policy version.
func checkTrained(t *testing.T, bin string, srv *server) {
	t.Helper()
	var last exportedTurn
	waitForEvery(t, trainedTimeout, 3*time.Second, "the rated turn to be trained", srv.daemon, func() error {
		turns := export(t, bin, srv.DataDir)
		for _, tr := range turns {
			if tr.Feedback != nil {
				last = tr
			}
		}
		if last.State != "trained" {
			return errNotYet
		}
		var sample struct {
			Reward         float64 `json:"reward"`
			TrainedVersion int64   `json:"trained_version"`
		}
		if err := json.Unmarshal(last.Raw["sample"], &sample); err != nil {
			return fmt.Errorf("rated turn %s is trained but its sample reads %s: %w", last.ID, last.Raw["sample"], err)
		}
		if sample.Reward != 1 || sample.TrainedVersion < 1 {
			return fmt.Errorf("rated turn's sample: reward %v, trained version %d; want reward 1 trained into version ≥ 1", sample.Reward, sample.TrainedVersion)
		}
		h, err := srv.health()
		if err != nil {
			return err
		}
		if h.PolicyVersion < 1 {
			return errNotYet
		}
		return nil
	})
	t.Logf("rated turn %s: state %s", last.ID, last.State)
}
