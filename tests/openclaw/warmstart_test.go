package openclaw

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
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
//
// What made the tiny model unreliable, and what the recipe does about it:
//   - OpenClaw's prompts carry the clock (the user messages' timestamps) and
//     the live turns come minutes after the warm start, so their digits
//     differ from the training prompts'. Each prompt is also rendered at
//     other clock times (its last tokens only, which is where the answer is
//     decided and where the timestamps sit), so the model learns not to read
//     the clock.
//   - The machine: OpenClaw's Runtime line names the host, the kernel and the
//     shell. localize writes this machine's host and kernel in; the test
//     pins the shell with OPENCLAW_SHELL.
//   - The tool call is written on one line (see qwenToolCall).
//
// probeWarmStart then measures what was learnt before OpenClaw runs.

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

var (
	// warmStartSuffixes are the tail lengths taught for the prompts at the
	// warm start's own clock time (which are also taught whole).
	warmStartSuffixes = []int{128, 512}
	// warmStartClocks are the other clock times, as offsets from the warm
	// start's, and the tail lengths taught for them.
	warmStartClocks        = []time.Duration{3 * time.Minute, 8 * time.Minute, 19 * time.Minute, 47 * time.Minute, 2*time.Hour + 31*time.Minute}
	warmStartClockSuffixes = []int{64, 256}
	// probeClocks are the clock times (offsets from the warm start's) the
	// taught model is probed at: none of them is taught, and the live turns
	// come a few minutes after the warm start.
	probeClocks = []time.Duration{5 * time.Minute, 12 * time.Minute}
)

// probeClockTimes returns probeClocks, or with CLAWRL_OPENCLAW_PROBE_CLOCKS=N
// set, N clock times spread over the next days (for measuring a change to
// the recipe: each is 7 requests, about a second).
func probeClockTimes(t *testing.T) []time.Duration {
	t.Helper()
	v := os.Getenv("CLAWRL_OPENCLAW_PROBE_CLOCKS")
	if v == "" {
		return probeClocks
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("CLAWRL_OPENCLAW_PROBE_CLOCKS=%q: want a count ≥ 1", v)
	}
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = time.Duration(1+i*97) * time.Minute
	}
	return out
}

// sftExample is one line of `clawrl train sft` pre-tokenised data.
type sftExample struct {
	PromptIDs     []int32 `json:"prompt_ids"`
	CompletionIDs []int32 `json:"completion_ids"`
}

// qwenToolCall is a tool call the way Qwen models write one, on one line,
// which clawrl's parser reads like the multi-line form: in the multi-line
// form a newline follows <tool_call>, and the newline that ends the prompt
// (after "assistant") is then followed by <tool_call> in one place and by
// {" in another — a two-layer model trained for minutes mixes those up and
// writes `{"name": "ls"}` without its tag, or `<tool_call>\n<tool_call>`.
// On one line every token of the call has one successor. A call without
// arguments leaves the "arguments" key out (the parser reads that as {}),
// for the same reason: `{"name": "ls", "arguments": {}}` repeats `":` and
// ` "` with different successors.
func qwenToolCall(name, args string) string {
	if strings.TrimSpace(args) == "" || strings.TrimSpace(args) == "{}" {
		return fmt.Sprintf("<tool_call>{\"name\": %q}</tool_call>", name)
	}
	return fmt.Sprintf("<tool_call>{\"name\": %q, \"arguments\": %s}</tool_call>", name, args)
}

// What the recorder's machine looked like: testdata/capture-lean was recorded
// with OpenClaw in captureRoot (its paths, the workspace, appear all through
// the system prompt), installed under captureInstall (the system prompt
// points at its docs), on host captureHost running captureOS, at a time
// captureStamp matches (the user messages' timestamps; the system prompt
// has the date).
const (
	captureRoot    = "/tmp/oc-capture-2owmpnv1"
	captureInstall = "/work/scratch/oc/cache/openclaw/node_modules/openclaw"
	captureHost    = "host=vm |"
	captureOS      = "os=Linux 6.18.44-fc-v595 (x64) |"
	// captureShell is what the recorder's OpenClaw detected; the test sets
	// OPENCLAW_SHELL to it so every machine says the same.
	captureShell = "bash"
)

var captureStamp = regexp.MustCompile(`\[[A-Z][a-z]{2} \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC\]`)

// machine is what OpenClaw's prompt says about the machine it runs on.
type machine struct {
	Install string // the openclaw package folder
	Host    string // host=… in the Runtime line
	OS      string // os=… (arch) in the Runtime line
}

// thisMachine works out what OpenClaw will say, as OpenClaw does: where its
// package lies, the host name without ".local", os.type() and os.release()
// with Node's arch. Where it cannot tell (not Linux) it keeps the
// recorder's words.
func thisMachine(t *testing.T, tc toolchain) machine {
	t.Helper()
	m := machine{Install: tc.Package, Host: captureHost, OS: captureOS}
	if p, err := filepath.EvalSymlinks(tc.Package); err == nil {
		m.Install = p
	}
	if h, err := os.Hostname(); err == nil {
		h = strings.TrimSpace(h)
		if len(h) > 6 && strings.EqualFold(h[len(h)-6:], ".local") {
			h = h[:len(h)-6]
		}
		if h == "" {
			h = "openclaw"
		}
		m.Host = "host=" + h + " |"
	}
	if runtime.GOOS != "linux" {
		t.Logf("not Linux: the warm start keeps the recorder's %q", captureOS)
		return m
	}
	out, err := exec.Command("uname", "-r").Output()
	if err != nil {
		t.Logf("uname -r: %v; the warm start keeps the recorder's %q", err, captureOS)
		return m
	}
	arch := map[string]string{"amd64": "x64", "386": "ia32"}[runtime.GOARCH]
	if arch == "" {
		arch = runtime.GOARCH
	}
	m.OS = fmt.Sprintf("os=Linux %s (%s) |", strings.TrimSpace(string(out)), arch)
	return m
}

// localize rewrites a recorded request as OpenClaw will send it in this run:
// its folder root instead of the recorder's, this machine's OpenClaw
// install and Runtime line, and the given clock time in the system prompt and the user
// messages' timestamps. Without it the training prompts differ from the
// live ones in dozens of tokens (paths of another length, another host,
// another day), and the tiny model's first answer token — whether it opens
// a <tool_call> — is no longer reliable.
func localize(body []byte, root string, m machine, now time.Time) []byte {
	now = now.UTC()
	s := strings.ReplaceAll(string(body), captureRoot, root)
	s = strings.ReplaceAll(s, captureInstall, m.Install)
	s = strings.ReplaceAll(s, captureHost, m.Host)
	s = strings.ReplaceAll(s, captureOS, m.OS)
	s = captureStamp.ReplaceAllString(s, now.Format("[Mon 2006-01-02 15:04 MST]"))
	s = strings.ReplaceAll(s, "2026-11-21", now.Format("2006-01-02"))
	return []byte(s)
}

// taught is what the warm start teaches for one recorded request: the
// recorder's answer, as the model is to write it.
func taught(t *testing.T, r capturedRequest) (streamedAnswer, string) {
	t.Helper()
	ans, err := parseSSE(r.ResponseSSE)
	if err != nil {
		t.Fatalf("%s: %v", r.Label, err)
	}
	if len(ans.ToolCalls) > 0 {
		c := ans.ToolCalls[0]
		return ans, qwenToolCall(c.Name, c.Arguments)
	}
	return ans, ans.Content
}

// localized returns the capture's requests as OpenClaw will send them from
// root on m at clock time now.
func localized(reqs []capturedRequest, root string, m machine, now time.Time) []capturedRequest {
	out := make([]capturedRequest, len(reqs))
	for i, r := range reqs {
		r.Body = localize(r.Body, root, m, now)
		out[i] = r
	}
	return out
}

// warmStart returns a checkpoint folder trained from base to answer the lean
// OpenClaw agent's requests, as OpenClaw will send them from ocRoot on m,
// and the prompt ids it taught for each request at the clock time now.
func warmStart(t *testing.T, bin, base, ocRoot string, m machine, now time.Time) (string, [][]int32) {
	t.Helper()
	reqs := loadCapture(t, "testdata/capture-lean")
	// The requests at the warm start's clock, then at each other clock.
	var all []capturedRequest
	for _, d := range append([]time.Duration{0}, warmStartClocks...) {
		all = append(all, localized(reqs, ocRoot, m, now.Add(d))...)
	}
	prompts := calibrationPromptIDs(t, bin, base, all)

	tok, err := tokenizer.Load(filepath.Join(base, "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	imEnd, ok := tok.TokenID("<|im_end|>")
	if !ok {
		t.Fatal("tokenizer has no <|im_end|>")
	}
	completions := make([][]int32, len(reqs))
	for i, r := range reqs {
		_, target := taught(t, r)
		completions[i] = append(tok.Encode(target), imEnd)
	}
	var lines []byte
	examples := 0
	for i, p := range prompts {
		completion := completions[i%len(reqs)]
		var cuts []int
		if i < len(reqs) {
			cuts = append([]int{len(p)}, warmStartSuffixes...)
		} else {
			cuts = warmStartClockSuffixes
		}
		for _, n := range cuts {
			if n > len(p) {
				continue
			}
			b, err := json.Marshal(sftExample{PromptIDs: p[len(p)-n:], CompletionIDs: completion})
			if err != nil {
				t.Fatal(err)
			}
			lines = append(append(lines, b...), '\n')
			examples++
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
	t.Logf("warm start: %d requests at %d clock times, %d examples, %d epochs in %.0fs; last lines:\n%s",
		len(reqs), 1+len(warmStartClocks), examples, warmStartEpochs, time.Since(start).Seconds(), tail(log, 400))
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
	return out, prompts[:len(reqs)]
}

// probeWarmStart asks a server on the taught policy each recorded request,
// localized as OpenClaw will send it but at clock times the warm start did
// not teach, and counts the answers that are what was taught: the ls call
// (parsed as a tool call by serve) or the exact text. It is what predicts
// the live run: every request OpenClaw sends in the scenario is one of
// these, once the turns before it went as taught.
func probeWarmStart(t *testing.T, bin, policy, ocRoot string, m machine, now time.Time, clocks []time.Duration) (good, total int) {
	t.Helper()
	reqs := loadCapture(t, "testdata/capture-lean")
	wants := make([]streamedAnswer, len(reqs))
	for i, r := range reqs {
		wants[i], _ = taught(t, r)
	}
	srv := startServe(t, bin, policy, t.TempDir(), "--method", "off")
	defer srv.stop(t)
	for _, d := range clocks {
		for i, r := range localized(reqs, ocRoot, m, now.Add(d)) {
			want := wants[i]
			body := asNonStreaming(t, r.Body)
			var resp struct {
				Choices []struct {
					Message exportedMsg `json:"message"`
				} `json:"choices"`
			}
			h := http.Header{}
			h.Set("X-Session-Id", fmt.Sprintf("probe-%v-%02d", d, i))
			if err := srv.call(http.MethodPost, "/v1/chat/completions", h, body, &resp); err != nil {
				t.Fatalf("probe %s: %v", r.Label, err)
			}
			if len(resp.Choices) != 1 {
				t.Fatalf("probe %s: %d choices", r.Label, len(resp.Choices))
			}
			got := resp.Choices[0].Message
			total++
			switch {
			case len(want.ToolCalls) > 0 && len(got.ToolCalls) == 1 && got.ToolCalls[0].Function.Name == want.ToolCalls[0].Name:
				good++
			case len(want.ToolCalls) == 0 && len(got.ToolCalls) == 0 && got.Content == want.Content:
				good++
			default:
				t.Logf("probe at +%v, %s: answered %.80q calls %+v; taught %.80q calls %+v", d, r.Label, got.Content, got.ToolCalls, want.Content, want.ToolCalls)
			}
		}
	}
	return good, total
}

// asNonStreaming returns a recorded request body as a non-streaming one. Its
// values stay byte for byte as OpenClaw sent them: the chat template writes
// tool schemas with their keys in the order they came, so a body decoded
// into maps (which encoding/json writes back sorted) renders another prompt.
func asNonStreaming(t *testing.T, raw []byte) map[string]json.RawMessage {
	t.Helper()
	var body map[string]json.RawMessage
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatal(err)
	}
	body["stream"] = json.RawMessage("false")
	delete(body, "stream_options")
	return body
}

// calibrationPromptIDs plays each recorded request (one token of answer
// each) to a server on base and returns the prompt ids it recorded for them.
func calibrationPromptIDs(t *testing.T, bin, base string, reqs []capturedRequest) [][]int32 {
	t.Helper()
	srv := startServe(t, bin, base, t.TempDir(), "--method", "off")
	for i, r := range reqs {
		body := asNonStreaming(t, r.Body)
		body["max_completion_tokens"] = json.RawMessage("1")
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
	in := `{"content":"[Sat 2026-11-21 05:42 UTC] hi\n\nRuntime: agent=main | ` + captureHost + " " + captureOS + ` node=v24","system":"Docs: ` + captureInstall + `/docs\nCurrent date: 2026-11-21. Workspace: ` + captureRoot + `/state/workspace"}`
	want := `{"content":"[Thu 2027-03-04 09:07 UTC] hi\n\nRuntime: agent=main | host=box | os=Linux 6.1.0-13-amd64 (x64) | node=v24","system":"Docs: /c/oc/node_modules/openclaw/docs\nCurrent date: 2027-03-04. Workspace: /x/y/state/workspace"}`
	m := machine{Install: "/c/oc/node_modules/openclaw", Host: "host=box |", OS: "os=Linux 6.1.0-13-amd64 (x64) |"}
	if got := string(localize([]byte(in), "/x/y", m, now)); got != want {
		t.Fatalf("localize:\n got %s\nwant %s", got, want)
	}
}

// explainDrift logs where the prompts of the live run's turns first differ
// from the prompts the warm start taught for the same requests (the
// recorded turns, main and side, in order, pair with the capture's requests
// while the run goes as recorded). The clock shows up here by design; a
// difference anywhere else is one the warm start did not foresee.
func explainDrift(t *testing.T, tokPath string, taughtPrompts [][]int32, turns []exportedTurn) {
	t.Helper()
	tok, err := tokenizer.Load(tokPath)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(turns) && i < len(taughtPrompts); i++ {
		live, want := turns[i].PromptIDs, taughtPrompts[i]
		var spans []string
		for j := 0; j < min(len(live), len(want)) && len(spans) < 4; j++ {
			if live[j] == want[j] {
				continue
			}
			k := j
			for k < min(len(live), len(want)) && live[k] != want[k] {
				k++
			}
			spans = append(spans, fmt.Sprintf("@%d live %q taught %q", j, tok.Decode(live[max(j-3, 0):min(k+3, len(live))]), tok.Decode(want[max(j-3, 0):min(k+3, len(want))])))
			j = k
		}
		if len(live) != len(want) {
			spans = append(spans, fmt.Sprintf("lengths: live %d, taught %d", len(live), len(want)))
		}
		if len(spans) == 0 {
			t.Logf("turn %d: live prompt = taught prompt (%d tokens)", i, len(live))
			continue
		}
		t.Logf("turn %d: live prompt differs from the taught one: %s", i, strings.Join(spans, "; "))
	}
}
