package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/store"
	"github.com/clawrl/clawrl/store/sqlite"
)

func TestDataDirFrom(t *testing.T) {
	home := func() (string, error) { return "/home/ada", nil }
	noHome := func() (string, error) { return "", errors.New("no home") }
	cases := []struct {
		name, xdg string
		home      func() (string, error)
		want      string
	}{
		{"xdg set", "/data", home, "/data/clawrl"},
		{"xdg unset", "", home, "/home/ada/.local/share/clawrl"},
		{"xdg relative is ignored", "rel/dir", home, "/home/ada/.local/share/clawrl"},
		{"no home", "", noHome, "clawrl-data"},
	}
	for _, c := range cases {
		if got := dataDirFrom(c.xdg, c.home); got != c.want {
			t.Errorf("%s: dataDirFrom(%q) = %q, want %q", c.name, c.xdg, got, c.want)
		}
	}
}

// seedStore writes a small history: two sessions, turns in several states,
// feedback, a tool call and a -Inf logprob.
func seedStore(t *testing.T, dir string) {
	t.Helper()
	ctx := t.Context()
	st, err := sqlite.OpenDir(ctx, dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	t0 := time.Date(2026, 11, 21, 5, 0, 0, 0, time.UTC)
	for si, key := range []string{"alice", "bob"} {
		sess := store.Session{Key: key, KeySource: "header", CreatedAt: t0}
		if err := st.CreateSession(ctx, &sess); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			tr := store.Turn{
				ID: fmt.Sprintf("chatcmpl-%s%d", key, i), SessionID: sess.ID, Type: store.Main,
				CreatedAt:         t0.Add(time.Duration(si*10+i) * time.Minute),
				Messages:          []chat.Message{{Role: chat.RoleUser, Content: fmt.Sprintf("q%d", i)}},
				PromptText:        "<|im_start|>user\nq<|im_end|>\n",
				PromptIDs:         []int32{1, 2, 3},
				Response:          chat.Message{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{ID: "c1", Type: "function", Function: chat.FunctionCall{Name: "f", Arguments: "{}"}}}},
				ResponseText:      "<tool_call>…</tool_call>",
				ResponseIDs:       []int32{7, 8},
				BehaviourLogprobs: []float32{-0.25, float32(math.Inf(-1))},
				PolicyVersion:     int64(i),
				FinishReason:      "tool_calls",
				TotalNanos:        1500000,
			}
			if i == 2 {
				tr.Type = store.Side
			}
			if key == "alice" {
				// bob's turns were recorded before the limit was kept.
				tr.MaxTokens = 256
			}
			if key == "bob" && i == 0 {
				// tool_choice forced the call's opening into the prompt.
				tr.ForcedText = "<tool_call>\n{\"name\": \"f\", \"arguments\":"
				tr.PromptText += "<|im_start|>assistant\n" + tr.ForcedText
				tr.ResponseText = " {}}\n</tool_call>"
			}
			if err := st.InsertTurn(ctx, &tr); err != nil {
				t.Fatal(err)
			}
		}
		next := []chat.Message{{Role: chat.RoleTool, ToolCallID: "c1", Content: "ok"}}
		if err := st.ObserveTurn(ctx, fmt.Sprintf("chatcmpl-%s0", key), next, store.NextTool, t0.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.AddFeedback(ctx, "chatcmpl-bob1", store.Feedback{Rating: -1, Text: "wrong tool", CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
}

func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCmd()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	err := root.ExecuteContext(t.Context())
	return out.String(), err
}

func decodeLines(t *testing.T, s string) []map[string]any {
	t.Helper()
	var recs []map[string]any
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %d is not JSON: %v\n%s", len(recs)+1, err, sc.Text())
		}
		recs = append(recs, m)
	}
	return recs
}

func TestExport(t *testing.T) {
	dir := t.TempDir()
	seedStore(t, dir)
	out, err := runCLI(t, "export", "--data", dir)
	if err != nil {
		t.Fatalf("export: %v", err)
	}
	recs := decodeLines(t, out)
	if len(recs) != 6 {
		t.Fatalf("exported %d records, want 6", len(recs))
	}
	seed := []string{"session_id", "turn", "timestamp", "messages", "prompt_text", "response_text", "tool_calls", "next_state"}
	ours := []string{"id", "seq", "type", "epoch", "state", "prompt_ids", "response_ids", "behaviour_logprobs",
		"policy_version", "finish_reason", "timings", "response", "session_key", "internal_session_id"}
	for i, r := range recs {
		for _, k := range append(seed, ours...) {
			if _, ok := r[k]; !ok {
				t.Errorf("record %d lacks %q", i, k)
			}
		}
	}
	first := recs[0]
	// session_id is the client's id for the conversation, as in the seed's
	// records; clawrl's own id has its own field.
	if first["session_id"] != "alice" || !strings.HasPrefix(first["internal_session_id"].(string), "sess-") {
		t.Errorf("first record: session_id %v, internal_session_id %v", first["session_id"], first["internal_session_id"])
	}
	if first["id"] != "chatcmpl-alice0" || first["turn"] != 0.0 || first["state"] != "observed" || first["session_key"] != "alice" ||
		first["timestamp"] != "2026-11-21T05:00:00Z" || first["next_state_kind"] != "tool" {
		t.Errorf("first record = %v", first)
	}
	if ns := first["next_state"].([]any); len(ns) != 1 || ns[0].(map[string]any)["content"] != "ok" {
		t.Errorf("next_state = %v", first["next_state"])
	}
	if tc := first["tool_calls"].([]any); len(tc) != 1 || tc[0].(map[string]any)["function"].(map[string]any)["name"] != "f" {
		t.Errorf("tool_calls = %v", first["tool_calls"])
	}
	if lp := first["behaviour_logprobs"].([]any); len(lp) != 2 || lp[0] != -0.25 || lp[1] != nil {
		t.Errorf("behaviour_logprobs = %v, want [-0.25 null]", lp)
	}
	if tm := first["timings"].(map[string]any); tm["total_ms"] != 1.5 {
		t.Errorf("timings = %v", tm)
	}
	if first["max_tokens"] != 256.0 {
		t.Errorf("first record: max_tokens %v, want 256", first["max_tokens"])
	}
	if _, ok := recs[3]["max_tokens"]; ok {
		t.Errorf("a turn recorded without its limit exports max_tokens %v", recs[3]["max_tokens"])
	}
	if _, ok := first["forced_text"]; ok {
		t.Errorf("unforced turn exports forced_text %v", first["forced_text"])
	}
	if forced := recs[3]; forced["id"] != "chatcmpl-bob0" || forced["forced_text"] != "<tool_call>\n{\"name\": \"f\", \"arguments\":" ||
		!strings.HasSuffix(forced["prompt_text"].(string), forced["forced_text"].(string)) {
		t.Errorf("forced record: forced_text %q prompt_text %q", forced["forced_text"], forced["prompt_text"])
	}
	if recs[1]["next_state"] != nil {
		t.Errorf("unobserved turn has next_state %v", recs[1]["next_state"])
	}
	fb := recs[4]["feedback"].(map[string]any)
	if recs[4]["id"] != "chatcmpl-bob1" || fb["rating"] != -1.0 || fb["text"] != "wrong tool" || recs[4]["state"] != "observed" {
		t.Errorf("feedback record = %v", recs[4])
	}

	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"type side", []string{"--type", "side"}, []string{"chatcmpl-alice2", "chatcmpl-bob2"}},
		{"state", []string{"--state", "observed"}, []string{"chatcmpl-alice0", "chatcmpl-bob0", "chatcmpl-bob1"}},
		{"since", []string{"--since", "2026-11-21T05:10:00Z"}, []string{"chatcmpl-bob0", "chatcmpl-bob1", "chatcmpl-bob2"}},
		{"since date", []string{"--since", "2026-11-22"}, nil},
	}
	for _, c := range cases {
		out, err := runCLI(t, append([]string{"export", "--data", dir}, c.args...)...)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		var got []string
		for _, r := range decodeLines(t, out) {
			got = append(got, r["id"].(string))
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: exported %v, want %v", c.name, got, c.want)
		}
	}
	// --session by the client's id and by the internal id, --ids=false,
	// and --out to a file.
	bob := recs[3]["session_id"].(string)
	if bob != "bob" {
		t.Fatalf("bob's session_id %q", bob)
	}
	byInternal, err := runCLI(t, "export", "--data", dir, "--session", recs[3]["internal_session_id"].(string))
	if err != nil || len(decodeLines(t, byInternal)) != 3 {
		t.Errorf("--session by internal id: %v\n%s", err, byInternal)
	}
	if _, err := runCLI(t, "export", "--data", dir, "--session", "carol"); err == nil {
		t.Errorf("--session of an unknown id succeeded")
	}
	path := filepath.Join(t.TempDir(), "bob.jsonl")
	if _, err := runCLI(t, "export", "--data", dir, "--session", bob, "--ids=false", "--out", path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs = decodeLines(t, string(b))
	if len(recs) != 3 {
		t.Fatalf("--session exported %d records, want 3", len(recs))
	}
	for _, r := range recs {
		if r["session_id"] != bob || r["prompt_ids"] != nil {
			t.Errorf("--session/--ids=false record: session %v prompt_ids %v", r["session_id"], r["prompt_ids"])
		}
	}
	for _, bad := range [][]string{{"--since", "yesterday"}, {"--state", "cooking"}, {"--type", "both"}} {
		if _, err := runCLI(t, append([]string{"export", "--data", dir}, bad...)...); err == nil {
			t.Errorf("export %v succeeded, want an error", bad)
		}
	}
	if _, err := runCLI(t, "export", "--data", t.TempDir()); err == nil {
		t.Errorf("export from an empty directory succeeded")
	}
}

// annotated adds the optional store.Annotator capability to a real store, as
// the learning loop's tables will.
type annotated struct{ *sqlite.Store }

func (a annotated) AnnotateTurns(_ context.Context, ids []string) (map[string]map[string]any, error) {
	out := map[string]map[string]any{}
	for _, id := range ids {
		if strings.HasSuffix(id, "0") {
			out[id] = map[string]any{"judgment": map[string]any{"score": 1, "votes": []int{1, 1, 0}}, "state": "hijacked"}
		}
	}
	return out, nil
}

func TestExportAnnotations(t *testing.T) {
	dir := t.TempDir()
	seedStore(t, dir)
	st, err := openStoreReadOnly(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var buf bytes.Buffer
	n, err := exportTurns(t.Context(), annotated{st}, &buf, exportOptions{TokenIDs: true})
	if err != nil || n != 6 {
		t.Fatalf("exportTurns = %d, %v", n, err)
	}
	recs := decodeLines(t, buf.String())
	j, ok := recs[0]["judgment"].(map[string]any)
	if !ok || j["score"] != 1.0 {
		t.Errorf("annotated record lacks the judgment: %v", recs[0])
	}
	if recs[0]["state"] != "observed" {
		t.Errorf("an annotation replaced the turn's own state: %v", recs[0]["state"])
	}
	if _, ok := recs[1]["judgment"]; ok {
		t.Errorf("unannotated turn got a judgment")
	}
}

// TestExportWhileWriting exports from a second, read-only store while the
// first keeps inserting: WAL readers see a consistent prefix and finish.
func TestExportWhileWriting(t *testing.T) {
	dir := t.TempDir()
	ctx := t.Context()
	w, err := sqlite.OpenDir(ctx, dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	sess := store.Session{Key: "busy"}
	if err := w.CreateSession(ctx, &sess); err != nil {
		t.Fatal(err)
	}
	insert := func(i int) {
		// 8k prompt ids growing by turn: stored as chunks shared between turns.
		ids := make([]int32, 8192+i)
		for j := range ids {
			ids[j] = int32(j)
		}
		tr := store.Turn{ID: fmt.Sprintf("chatcmpl-busy%d", i), SessionID: sess.ID, PromptIDs: ids}
		if err := w.InsertTurn(ctx, &tr); err != nil {
			t.Error(err)
		}
	}
	for i := range 300 {
		insert(i)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 300; ; i++ {
			select {
			case <-stop:
				return
			default:
				insert(i)
			}
		}
	})
	out, err := runCLI(t, "export", "--data", dir)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("export while writing: %v", err)
	}
	recs := decodeLines(t, out)
	if len(recs) < 300 {
		t.Fatalf("exported %d records, want at least the 300 written before", len(recs))
	}
	for i, r := range recs {
		if r["turn"] != float64(i) {
			t.Fatalf("record %d has turn %v: the export skipped or repeated a row", i, r["turn"])
		}
		if ids := r["prompt_ids"].([]any); len(ids) != 8192+i || ids[len(ids)-1] != float64(8191+i) {
			t.Fatalf("record %d has %d prompt ids", i, len(ids))
		}
	}
}

func TestStatus(t *testing.T) {
	dir := t.TempDir()
	seedStore(t, dir)
	out, err := runCLI(t, "status", "--data", dir, "--json")
	if err != nil {
		t.Fatalf("status --json: %v", err)
	}
	var rep statusReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("status --json is not JSON: %v\n%s", err, out)
	}
	if rep.Sessions != 2 || rep.Turns != 6 || rep.TurnsByState[store.Observed] != 3 || rep.TurnsByState[store.Generated] != 3 ||
		rep.TurnsByType[store.Side] != 2 || rep.AwaitingJudge != 3 || rep.PolicyVersion != 2 || rep.SchemaVersion < 1 ||
		rep.Database != filepath.Join(dir, sqlite.FileName) || rep.DatabaseBytes == 0 {
		t.Errorf("status = %+v", rep)
	}
	table, err := runCLI(t, "status", "--data", dir)
	if err != nil {
		t.Fatalf("status: %v", err)
	}
	for _, want := range []string{"sessions", "2 (0 expired)", "waiting for judge", "observed", "policy version"} {
		if !strings.Contains(table, want) {
			t.Errorf("status table lacks %q:\n%s", want, table)
		}
	}
	if _, err := runCLI(t, "status", "--data", t.TempDir()); err == nil {
		t.Errorf("status of an empty directory succeeded")
	}
}
