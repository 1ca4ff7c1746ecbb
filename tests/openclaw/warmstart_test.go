package openclaw

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clawrl/clawrl/tokenizer"
)

// The warm start: a random tiny model answers OpenClaw with noise, so before
// the end-to-end run it is taught, with `clawrl train sft`, the answers a
// tool round needs — a call of ls when the user asks, "Done." after the tool
// result, a summary when asked to compact. The prompts are OpenClaw's own
// (testdata/capture-lean) exactly as clawrl renders and tokenises them: the
// test plays each recorded request to a calibration server and takes the
// prompt ids it recorded, so the training prompts cannot drift from what
// serve builds. The answers are the ones the recorder gave.

// The recipe. Besides each whole prompt, the examples repeat its answer
// after only the prompt's last tokens: the few answer tokens are what must
// be learned, and short copies teach them for a fraction of the compute of
// whole ~2k-token prompts.
const (
	warmStartEpochs = 24
	warmStartBatch  = 7
	warmStartLR     = 5e-3
	sftTimeout      = 30 * time.Minute
)

var warmStartSuffixes = []int{128, 512}

// sftExample is one line of `clawrl train sft` pre-tokenised data.
type sftExample struct {
	PromptIDs     []int32 `json:"prompt_ids"`
	CompletionIDs []int32 `json:"completion_ids"`
}

// qwenToolCall is a tool call the way Qwen models write one, which clawrl's
// parser reads. A call without arguments leaves the "arguments" key out (the
// parser reads that as {}): then every token of the call follows from the
// one before it alone (<tool_call> \n {" name ": " ls "}\n </tool_call>),
// which a two-layer model learns reliably, where `{"name": "ls",
// "arguments": {}}` repeats `":` and ` "` with different successors and a
// tiny model trained briefly mixes them up.
func qwenToolCall(name, args string) string {
	if strings.TrimSpace(args) == "" || strings.TrimSpace(args) == "{}" {
		return fmt.Sprintf("<tool_call>\n{\"name\": %q}\n</tool_call>", name)
	}
	return fmt.Sprintf("<tool_call>\n{\"name\": %q, \"arguments\": %s}\n</tool_call>", name, args)
}

// captureRoot is the folder OpenClaw ran in when testdata/capture-lean was
// recorded; its paths (the workspace) appear all through the system prompt.
const captureRoot = "/tmp/oc-capture-2owmpnv1"

var captureStamp = regexp.MustCompile(`\[[A-Z][a-z]{2} \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC\]`)

// localize rewrites a recorded request as OpenClaw will send it in this run:
// its folder root instead of the recorder's, and today's date and time in
// the system prompt and the user messages' timestamps. Without it the
// training prompts differ from the live ones in dozens of tokens (paths of
// another length, another day), and the tiny model's first answer token —
// whether it opens a <tool_call> — is no longer reliable.
func localize(body []byte, root string, now time.Time) []byte {
	now = now.UTC()
	s := strings.ReplaceAll(string(body), captureRoot, root)
	s = captureStamp.ReplaceAllString(s, now.Format("[Mon 2006-01-02 15:04 MST]"))
	s = strings.ReplaceAll(s, "2026-11-21", now.Format("2006-01-02"))
	return []byte(s)
}

// warmStart returns a checkpoint folder trained from base to answer the lean
// OpenClaw agent's requests, as OpenClaw will send them from ocRoot.
func warmStart(t *testing.T, bin, base, ocRoot string) string {
	t.Helper()
	reqs := loadCapture(t, "testdata/capture-lean")
	now := time.Now()
	for i := range reqs {
		reqs[i].Body = localize(reqs[i].Body, ocRoot, now)
	}
	prompts := calibrationPromptIDs(t, bin, base, reqs)

	tok, err := tokenizer.Load(filepath.Join(base, "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	imEnd, ok := tok.TokenID("<|im_end|>")
	if !ok {
		t.Fatal("tokenizer has no <|im_end|>")
	}
	var lines []byte
	for i, r := range reqs {
		ans, err := parseSSE(r.ResponseSSE)
		if err != nil {
			t.Fatalf("%s: %v", r.Label, err)
		}
		target := ans.Content
		if len(ans.ToolCalls) > 0 {
			c := ans.ToolCalls[0]
			target = qwenToolCall(c.Name, c.Arguments)
		}
		completion := append(tok.Encode(target), imEnd)
		examples := []sftExample{{PromptIDs: prompts[i], CompletionIDs: completion}}
		for _, n := range warmStartSuffixes {
			if n < len(prompts[i]) {
				examples = append(examples, sftExample{PromptIDs: prompts[i][len(prompts[i])-n:], CompletionIDs: completion})
			}
		}
		for _, ex := range examples {
			b, err := json.Marshal(ex)
			if err != nil {
				t.Fatal(err)
			}
			lines = append(append(lines, b...), '\n')
		}
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "warmstart.jsonl")
	if err := os.WriteFile(data, lines, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "policy")
	start := time.Now()
	log := clawrl(t, bin, sftTimeout, "train", "sft", "--model", base, "--data", data, "--out", out,
		"--mode", "full", "--lr", strconv.FormatFloat(warmStartLR, 'g', -1, 64),
		"--epochs", strconv.Itoa(warmStartEpochs), "--batch", strconv.Itoa(warmStartBatch), "--seed", "1")
	t.Logf("warm start: %d examples, %d epochs in %.0fs; last lines:\n%s", len(reqs), warmStartEpochs,
		time.Since(start).Seconds(), tail(log, 400))
	// The trainer writes weights and config; serving also needs the
	// tokenizer and generation settings of the base checkpoint.
	for _, name := range []string{"tokenizer.json", "tokenizer_config.json", "generation_config.json"} {
		if _, err := os.Stat(filepath.Join(out, name)); err == nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(base, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// calibrationPromptIDs plays each recorded request (one token of answer
// each) to a server on base and returns the prompt ids it recorded for them.
func calibrationPromptIDs(t *testing.T, bin, base string, reqs []capturedRequest) [][]int32 {
	t.Helper()
	srv := startServe(t, bin, base, t.TempDir(), "--method", "off")
	for i, r := range reqs {
		var body map[string]any
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatal(err)
		}
		body["max_completion_tokens"] = 1
		body["stream"] = false
		delete(body, "stream_options")
		h := http.Header{}
		h.Set("X-Session-Id", fmt.Sprintf("calibration-%02d", i))
		if err := srv.call(http.MethodPost, "/v1/chat/completions", h, body, nil); err != nil {
			t.Fatalf("calibration request %s: %v", r.Label, err)
		}
	}
	srv.stop(t)
	turns := export(t, bin, srv.DataDir)
	if len(turns) != len(reqs) {
		t.Fatalf("calibration recorded %d turns for %d requests", len(turns), len(reqs))
	}
	out := make([][]int32, len(turns))
	for i, tr := range turns {
		if want := fmt.Sprintf("calibration-%02d", i); tr.SessionKey != want {
			t.Fatalf("calibration turn %d is from session %q, want %q", i, tr.SessionKey, want)
		}
		if len(tr.PromptIDs) == 0 {
			t.Fatalf("calibration turn %d recorded no prompt ids", i)
		}
		out[i] = tr.PromptIDs
	}
	return out
}

func TestLocalize(t *testing.T) {
	now := time.Date(2027, 3, 4, 9, 7, 0, 0, time.UTC)
	in := `{"content":"[Sat 2026-11-21 05:42 UTC] hi","system":"Current date: 2026-11-21. Workspace: ` + captureRoot + `/state/workspace"}`
	want := `{"content":"[Thu 2027-03-04 09:07 UTC] hi","system":"Current date: 2027-03-04. Workspace: /x/y/state/workspace"}`
	if got := string(localize([]byte(in), "/x/y", now)); got != want {
		t.Fatalf("localize:\n got %s\nwant %s", got, want)
	}
}
