package dashboard

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromium finds the browser, or skips (fails under CLAWRL_REQUIRE_REFS=1).
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CLAWRL_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "chromium not found (apt-get install chromium, or set CLAWRL_CHROMIUM): the dashboard's browser test needs it"
	if os.Getenv("CLAWRL_REQUIRE_REFS") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// repoRoot is the repository root (this package is tests/dashboard).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestMain removes the binary the tests share.
func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

var (
	binDir   string
	binOnce  sync.Once
	binPath  string
	binError error
)

// buildClawrl builds cmd/clawrl once for all the tests of this package.
func buildClawrl(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		if binDir, binError = os.MkdirTemp("", "clawrl-dashboard-test-"); binError != nil {
			return
		}
		binPath = filepath.Join(binDir, "clawrl")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/clawrl")
		cmd.Dir = repoRoot(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			binError = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	if binError != nil {
		t.Fatal(binError)
	}
	return binPath
}

type server struct {
	addr string
	mu   sync.Mutex
	log  strings.Builder
	kill func() // kill -9, and wait for it to be gone
}

func (s *server) logText() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.String()
}

// startServe runs `clawrl serve` on a free port and waits until it listens.
// engine "scripted" selects the deterministic test engine; "" serves the
// model args name (--model random:tiny: a random tiny Qwen3 written under
// data on first use).
func startServe(t *testing.T, exe, data, engine string, args ...string) *server {
	t.Helper()
	s := &server{}
	cmd := exec.Command(exe, append([]string{"serve", "--addr", "127.0.0.1:0", "--data", data}, args...)...)
	cmd.Env = append(os.Environ(), "CLAWRL_TEST_ENGINE="+engine)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			s.mu.Lock()
			s.log.WriteString(line + "\n")
			s.mu.Unlock()
			if strings.Contains(line, "msg=listening") {
				for _, f := range strings.Fields(line) {
					if a, ok := strings.CutPrefix(f, "addr="); ok {
						addr <- a
					}
				}
			}
		}
		done <- cmd.Wait()
	}()
	var once sync.Once
	s.kill = func() {
		once.Do(func() {
			cmd.Process.Kill()
			<-done
		})
	}
	t.Cleanup(s.kill)
	select {
	case s.addr = <-addr:
		return s
	case err := <-done:
		t.Fatalf("clawrl serve exited before listening: %v\n%s", err, s.logText())
	case <-time.After(2 * time.Minute):
		t.Fatalf("clawrl serve did not listen within 2 minutes\n%s", s.logText())
	}
	return nil
}

// newBrowser starts headless Chromium with a fresh profile.
func newBrowser(t *testing.T, ctx context.Context) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1360, 900),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	bctx, cancel := chromedp.NewContext(alloc, chromedp.WithLogf(t.Logf))
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return bctx
}

// screens is where screenshots go: testdata/tmp/dashboard at the root.
func screens(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(repoRoot(t), "testdata", "tmp", "dashboard")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	run(t, ctx, "let the page settle", chromedp.Sleep(150*time.Millisecond))
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(screens(t), name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// run runs browser actions, failing the test with what was being done.
func run(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, actions...); err != nil {
		fail(t, ctx, what, err)
	}
}

// fail stops the test with what was being done and the page's text.
func fail(t *testing.T, ctx context.Context, what string, err error) {
	t.Helper()
	text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("main") ? document.getElementById("main").innerText.slice(0, 2000) : ""`))
	t.Fatalf("%s: %v\npage text:\n%s", what, err, text)
}

// js evaluates expr and returns its result.
func js[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		fail(t, ctx, "evaluate "+expr, err)
	}
	return v
}

// waitFor polls a JavaScript condition.
func waitFor(t *testing.T, ctx context.Context, what, cond string, timeout time.Duration) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](cond, chromedp.WithPollingTimeout(timeout), chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		fail(t, ctx, "wait for "+what, err)
	}
}

const lastAnswer = `Array.from(document.querySelectorAll("#chat-log .msg.assistant")).pop()`

// sendChat types a message, sends it, and waits for the streamed answer to
// finish (its rating bar present and the send button enabled again).
func sendChat(t *testing.T, ctx context.Context, text string, timeout time.Duration) {
	t.Helper()
	before := js[int](t, ctx, `document.querySelectorAll("#chat-log .msg.assistant").length`)
	run(t, ctx, "type a message", chromedp.WaitVisible(chromedp.ID("chat-input")), chromedp.SendKeys(chromedp.ID("chat-input"), text),
		chromedp.Click(chromedp.ID("chat-send")))
	waitFor(t, ctx, "the streamed answer", fmt.Sprintf(`(() => { const n = document.querySelectorAll("#chat-log .msg.assistant");
		const a = n[n.length-1]; return n.length > %d && !a.querySelector(".streaming") && a.querySelector(".rate") && !document.getElementById("chat-send").disabled })()`, before), timeout)
}

// rate clicks 👍 or 👎 under the last answer and optionally writes feedback.
func rate(t *testing.T, ctx context.Context, up bool, text string) {
	t.Helper()
	button := ".rate-down"
	if up {
		button = ".rate-up"
	}
	js[bool](t, ctx, lastAnswer+`.querySelector("`+button+`").click() || true`)
	waitFor(t, ctx, "the rating recorded", lastAnswer+`.querySelector(".done").textContent.includes("recorded")`, 10*time.Second)
	if text == "" {
		return
	}
	run(t, ctx, "write feedback", chromedp.SendKeys(chromedp.CSS(`#chat-log .msg.assistant:last-child .rate-text`), text))
	js[bool](t, ctx, lastAnswer+`.querySelector(".rate-send").click() || true`)
	waitFor(t, ctx, "the feedback recorded", lastAnswer+`.querySelector(".done").textContent.includes("feedback recorded")`, 10*time.Second)
}

// hostile is markup a model might write; it must show as text.
const hostile = `<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2"> done`

// TestDashboardChatFeedbackSessions signs in with the API key, chats with
// the deterministic test engine (a streamed answer with reasoning, a tool
// call and hostile markup), rates it 👎 with written feedback, and finds the
// turn with its feedback in the sessions view and on its own page.
func TestDashboardChatFeedbackSessions(t *testing.T) {
	chromium(t)
	exe := buildClawrl(t)
	const key = "dashboard-test-key"
	srv := startServe(t, exe, t.TempDir(), "scripted", "--api-key", key)
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	b := newBrowser(t, ctx)
	base := "http://" + srv.addr + "/"

	// The page loads without the key and asks for it; its data does not.
	run(t, b, "open the dashboard", chromedp.Navigate(base), chromedp.WaitVisible(chromedp.ID("login-key")))
	shot(t, b, "1-login")
	run(t, b, "sign in with a wrong key", chromedp.SendKeys(chromedp.ID("login-key"), "wrong"), chromedp.Click(chromedp.CSS(`#login-form button[type=submit]`)))
	waitFor(t, b, "the refusal", `document.getElementById("login-error").textContent.includes("not accepted")`, 10*time.Second)
	run(t, b, "sign in", chromedp.SendKeys(chromedp.ID("login-key"), key), chromedp.Click(chromedp.CSS(`#login-form button[type=submit]`)),
		chromedp.WaitVisible(chromedp.ID("chat-input")))
	if href := js[string](t, b, `location.href`); strings.Contains(href, key) {
		t.Errorf("the key is in the address: %s", href)
	}
	if got := js[string](t, b, `sessionStorage.getItem("clawrl.apiKey")`); got != key {
		t.Errorf("sessionStorage key = %q", got)
	}

	// Chat: the answer streams (the bubble shows partial text while the
	// slow cue holds each token back), with reasoning and a tool call shown
	// as such, and markup as text.
	message := `[[slow:15]][[think:Checking what the markup does.]][[say:Markup as text: ` + hostile + `]][[tool:lookup {"q":"<b>x</b>"}]]`
	run(t, b, "type a message", chromedp.SendKeys(chromedp.ID("chat-input"), message), chromedp.Click(chromedp.ID("chat-send")))
	waitFor(t, b, "a partly streamed answer", `(() => { const s = document.querySelector("#chat-log .streaming");
		return s && s.textContent.length > 0 && !s.textContent.includes("done") })()`, 30*time.Second)
	shot(t, b, "2-chat-streaming")
	waitFor(t, b, "the whole answer", lastAnswer+` && !document.querySelector("#chat-log .streaming") && `+lastAnswer+`.querySelector(".rate")`, 60*time.Second)
	content := js[string](t, b, lastAnswer+`.querySelector(".content").textContent`)
	if !strings.Contains(content, hostile) {
		t.Errorf("answer text %q does not show the markup %q as text", content, hostile)
	}
	if r := js[string](t, b, lastAnswer+`.querySelector(".reasoning").textContent`); !strings.Contains(r, "Checking what the markup does.") {
		t.Errorf("reasoning block = %q", r)
	}
	if c := js[string](t, b, lastAnswer+`.querySelector(".toolcall").textContent`); !strings.Contains(c, `lookup({"q":"<b>x</b>"})`) {
		t.Errorf("tool call block = %q", c)
	}
	checkInert(t, b)

	rate(t, b, false, "Too terse <b>and</b> it called a tool for nothing.")
	shot(t, b, "3-chat-rated")
	session := js[string](t, b, `document.getElementById("chat-session").textContent`)

	// Sessions: the conversation is listed under the chat's own id, with
	// the key's source and the browser as its client.
	run(t, b, "open the sessions", chromedp.Navigate(base+"#/sessions"), chromedp.WaitVisible(chromedp.CSS("#sessions-body tr")))
	waitFor(t, b, "the session in the list", fmt.Sprintf(`Array.from(document.querySelectorAll("#sessions-body .session-name")).some(a => a.textContent === %q)`, session), 10*time.Second)
	row := js[string](t, b, fmt.Sprintf(`Array.from(document.querySelectorAll("#sessions-body tr")).find(r => r.querySelector(".session-name") && r.querySelector(".session-name").textContent === %q).innerText`, session))
	if !strings.Contains(row, "header") || !strings.Contains(row, "browser (HeadlessChrome/") {
		t.Errorf("session row %q: want key source header and the browser as client", row)
	}
	shot(t, b, "4-sessions")
	run(t, b, "search the sessions", chromedp.SendKeys(chromedp.ID("session-search"), session[:8]), chromedp.Click(chromedp.CSS(`.toolbar button[type=submit]`)))
	waitFor(t, b, "the search result", fmt.Sprintf(`location.hash.includes("q=") && Array.from(document.querySelectorAll("#sessions-body .session-name")).some(a => a.textContent === %q)`, session), 10*time.Second)
	// The search re-renders the list after the hash changes, so the link
	// found above may be replaced while we click: find and click it in one
	// step, retried until it is there (it once ran between the two).
	waitFor(t, b, "the session link, clicked", fmt.Sprintf(`(() => { const a = Array.from(document.querySelectorAll("#sessions-body .session-name")).find(a => a.textContent === %q);
		if (!a) return false; a.click(); return true })()`, session), 10*time.Second)
	waitFor(t, b, "the turn with its feedback", `(() => { const r = document.querySelector(".turn-row");
		return r && r.querySelector(".badge.bad.rating") && r.innerText.includes("Too terse <b>and</b>") })()`, 10*time.Second)
	shot(t, b, "5-session")
	js[bool](t, b, `document.querySelector(".turn-row a").click() || true`)
	waitFor(t, b, "the turn page", `document.getElementById("turn-feedback") !== null`, 10*time.Second)
	if fb := js[string](t, b, `document.getElementById("turn-feedback").innerText`); !strings.Contains(fb, "Too terse <b>and</b> it called a tool for nothing.") {
		t.Errorf("turn page feedback = %q", fb)
	}
	if a := js[string](t, b, `document.getElementById("turn-answer").innerText`); !strings.Contains(a, hostile) || !strings.Contains(a, "generated") {
		t.Errorf("turn page answer = %q", a)
	}
	checkInert(t, b)
	run(t, b, "open the prompt's folds", chromedp.Evaluate[chromedp.Void](`document.querySelectorAll("details").forEach(d => d.open = true)`))
	shot(t, b, "6-turn")

	// Continue the recorded conversation from the chat's session list: a
	// new chat first, then pick the session; its history comes back and the
	// next answer lands in the same session.
	run(t, b, "open the chat", chromedp.Navigate(base+"#/chat"), chromedp.WaitVisible(chromedp.ID("new-chat")), chromedp.Click(chromedp.ID("new-chat")))
	waitFor(t, b, "a new session", fmt.Sprintf(`document.getElementById("chat-session").textContent !== %q`, session), 10*time.Second)
	waitFor(t, b, "the session to pick", fmt.Sprintf(`Array.from(document.querySelectorAll("#chat-sessions button")).some(b => b.title === %q)`, session), 10*time.Second)
	js[bool](t, b, fmt.Sprintf(`Array.from(document.querySelectorAll("#chat-sessions button")).find(b => b.title === %q).click() || true`, session))
	waitFor(t, b, "the picked conversation", fmt.Sprintf(`document.getElementById("chat-session").textContent === %q && document.querySelectorAll("#chat-log .msg.assistant").length === 1`, session), 10*time.Second)
	checkInert(t, b)
	sendChat(t, b, "[[say:Continued in the same session.]]", 30*time.Second)
	if got := js[string](t, b, lastAnswer+`.querySelector(".content").textContent`); got != "Continued in the same session." {
		t.Errorf("continued answer = %q", got)
	}
	turns := js[float64](t, b, fmt.Sprintf(`fetch("/ui/api/sessions?q=%s", {headers: {Authorization: "Bearer " + sessionStorage.getItem("clawrl.apiKey")}})
		.then(r => r.json()).then(d => d.sessions.find(s => s.name === %q).main)`, session, session))
	if turns != 2 {
		t.Errorf("session %s has %v main turns after continuing, want 2", session, turns)
	}

	// Nothing of the conversation reached the server's log.
	if log := srv.logText(); strings.Contains(log, "Too terse") || strings.Contains(log, "Markup as text") || strings.Contains(log, key) {
		t.Errorf("the server log holds conversation text or the key:\n%s", log)
	}
}

// TestDashboardAnswerCutOff: the server goes away mid-answer. The chat says
// the answer failed and offers no rating for it (it was never recorded), and
// the next message, to the server started again, goes without the failed
// exchange in its history.
func TestDashboardAnswerCutOff(t *testing.T) {
	chromium(t)
	exe := buildClawrl(t)
	data := t.TempDir()
	srv := startServe(t, exe, data, "scripted")
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	b := newBrowser(t, ctx)
	run(t, b, "open the chat", chromedp.Navigate("http://"+srv.addr+"/#/chat"), chromedp.WaitVisible(chromedp.ID("chat-input")))
	sendChat(t, b, "[[say:A whole answer.]] first", 30*time.Second)

	run(t, b, "type a long, slow message", chromedp.SendKeys(chromedp.ID("chat-input"), "[[slow:50]][[long]] go on"), chromedp.Click(chromedp.ID("chat-send")))
	waitFor(t, b, "the answer streaming", `(() => { const s = document.querySelector("#chat-log .streaming"); return s && s.textContent.includes("la la") })()`, 30*time.Second)
	srv.kill()
	waitFor(t, b, "the failure shown", lastAnswer+`.querySelector(".error") && !document.getElementById("chat-send").disabled`, 30*time.Second)
	shot(t, b, "cutoff-1-failed")
	if e := js[string](t, b, lastAnswer+`.querySelector(".error").textContent`); !strings.Contains(e, "The answer failed") {
		t.Errorf("failure text %q", e)
	}
	if js[bool](t, b, lastAnswer+`.querySelector(".rate") !== null`) {
		t.Error("the failed answer offers a rating; it was never recorded")
	}
	if n := js[float64](t, b, `document.querySelectorAll("#chat-log .rate").length`); n != 1 {
		t.Errorf("%v rating bars, want the first answer's only", n)
	}

	// The server again, at the same address and store: [[again]] repeats
	// the last assistant message the request carries, which must be the
	// whole first answer, not the cut one.
	again := startServe(t, exe, data, "scripted", "--addr", srv.addr)
	if again.addr != srv.addr {
		t.Fatalf("restarted at %s, want %s", again.addr, srv.addr)
	}
	sendChat(t, b, "[[again]]", 30*time.Second)
	if got := js[string](t, b, lastAnswer+`.querySelector(".content").textContent`); got != "A whole answer." {
		t.Errorf("the answer after the failure repeats %q, want the first answer (the failed exchange left out of the history)", got)
	}
	shot(t, b, "cutoff-2-after")
}

// checkInert checks that no markup from the conversation became elements or
// ran.
func checkInert(t *testing.T, ctx context.Context) {
	t.Helper()
	if n := js[int](t, ctx, `document.querySelectorAll("#main img, #main script, #main b").length`); n != 0 {
		t.Errorf("%d img/script/b elements in the page: model or user text became HTML", n)
	}
	if pwned := js[bool](t, ctx, `window.__pwned !== undefined`); pwned {
		t.Errorf("a script from the conversation ran")
	}
}

// TestDashboardLearning talks to a real model (a random tiny Qwen3 on the
// native engine, which the trainer trains), rates two answers,
// and watches the version they trained appear on the learning page, beside
// the curves of a `clawrl bench learn` result file.
func TestDashboardLearning(t *testing.T) {
	chromium(t)
	exe := buildClawrl(t)
	data := t.TempDir()
	// A bench learn result, for the curves (bench learn writes these; this
	// one is a fixture in its format).
	fixture, err := os.ReadFile(filepath.Join("testdata", "bench_learn_fixture.json"))
	if err != nil {
		t.Fatal(err)
	}
	benchDir := filepath.Join(data, "bench", "learn")
	if err := os.MkdirAll(benchDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(benchDir, "fixture.json"), fixture, 0o644); err != nil {
		t.Fatal(err)
	}
	// Short answers and judge votes keep the random model's turns quick.
	srv := startServe(t, exe, data, "", "--model", "random:tiny", "--max-tokens", "12", "--judge-max-tokens", "24", "--batch-size", "2")
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	defer cancel()
	b := newBrowser(t, ctx)
	base := "http://" + srv.addr + "/"

	run(t, b, "open the chat", chromedp.Navigate(base), chromedp.WaitVisible(chromedp.ID("chat-input")))
	sendChat(t, b, "Hello! What is the capital of France?", 2*time.Minute)
	rate(t, b, false, "Answer in English: the capital of France is Paris.")
	sendChat(t, b, "Thanks. And of Italy?", 2*time.Minute)
	rate(t, b, true, "")
	shot(t, b, "7-chat-model")

	run(t, b, "open the learning page", chromedp.Navigate(base+"#/learning"), chromedp.WaitVisible(chromedp.ID("learning-page")))
	waitFor(t, b, "a trained version", `document.querySelector("#versions-table .version-row") !== null`, 5*time.Minute)
	if v := js[string](t, b, `document.getElementById("stat-version").innerText`); !strings.Contains(v, "v1") {
		t.Errorf("latest version card = %q, want v1", v)
	}
	row := js[string](t, b, `document.querySelector("#versions-table .version-row").innerText`)
	if !strings.Contains(row, "v1") || !(strings.Contains(row, "promoted") || strings.Contains(row, "rejected")) {
		t.Errorf("version row = %q, want v1 and its promotion result", row)
	}
	if n := js[int](t, b, `document.querySelectorAll("#learning-page svg.chart circle").length`); n < 1+2*3 {
		t.Errorf("%d chart points, want the version's reward and the fixture's curves", n)
	}
	if bench := js[string](t, b, `document.getElementById("bench").innerText`); !strings.Contains(bench, "fixture.json") || !strings.Contains(bench, "combine") {
		t.Errorf("bench card = %q", bench)
	}
	run(t, b, "tall viewport", chromedp.EmulateViewport(1360, 1500))
	shot(t, b, "8-learning")

	// The rated turn's page: its judgment, its sample, the version that
	// trained it.
	run(t, b, "open the sessions", chromedp.EmulateViewport(1360, 1300), chromedp.Navigate(base+"#/sessions"), chromedp.WaitVisible(chromedp.CSS("#sessions-body .session-name")))
	js[bool](t, b, `document.querySelector("#sessions-body .session-name").click() || true`)
	waitFor(t, b, "the session's turns", `document.querySelector(".turn-row a") !== null`, 10*time.Second)
	js[bool](t, b, `document.querySelector(".turn-row a").click() || true`)
	waitFor(t, b, "the trained turn", `document.getElementById("turn-sample") !== null && document.getElementById("turn-sample").innerText.includes("version 1")`, 10*time.Second)
	if j := js[string](t, b, `document.getElementById("turn-judgment").innerText`); !strings.Contains(j, "Score") || !strings.Contains(strings.ToLower(j), "votes (") {
		t.Errorf("turn judgment = %q", j)
	}
	// A 👎 with written feedback trains on the teacher's answer: the page
	// shows what the rating taught, in the model's own words.
	if smp := js[string](t, b, `document.getElementById("turn-sample").innerText`); strings.Contains(smp, "trained on the teacher's response") {
		taught := js[string](t, b, `(document.getElementById("turn-teacher-answer") || {innerText: ""}).innerText`)
		if !strings.Contains(taught, "the teacher's answer") || strings.Contains(taught, "needs the served model's tokenizer") {
			t.Errorf("a teacher-written sample's page shows %q, want the teacher's answer as text", taught)
		}
	}
	shot(t, b, "9-turn-trained")
}
