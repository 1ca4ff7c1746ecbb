package loop

import (
	"context"
	"net"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/clawrl/clawrl/api"
	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/engine/native"
	"github.com/clawrl/clawrl/engine/scripted"
	"github.com/clawrl/clawrl/judge"
	"github.com/clawrl/clawrl/rl"
	"github.com/clawrl/clawrl/rl/rltest"
	"github.com/clawrl/clawrl/store"
)

// teacherServer is a second, real clawrl gateway (its own store and
// engine) on a loopback port: what --teacher-url points at.
func teacherServer(t *testing.T, eng engine.Engine) string {
	t.Helper()
	st := openStore(t, t.TempDir())
	t.Cleanup(func() { st.Close() })
	gw, err := api.New(api.Config{Engine: eng, Store: st, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gw.Handler())
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// remoteWritten is one rated turn with written feedback, judged into its
// sample by a loop whose teacher writes through remote; local is what the
// policy's own teacher writes for it.
type remoteWritten struct {
	sample       store.Sample
	teacher      *judge.Teacher
	msgs         []chat.Message
	rated        store.Turn
	local        []int32
	localLP      []float32
	policyFormat engine.Format
	runner       *Runner
}

const remoteTokens = 40

func remoteWrittenTurn(t *testing.T, remote *judge.RemoteTeacher, prompt, critique string) remoteWritten {
	t.Helper()
	return remoteWrittenTurnAt(t, remote, prompt, critique, judge.HintInUser)
}

// remoteWrittenTurnAt is remoteWrittenTurn with the teacher's hint placement
// given.
func remoteWrittenTurnAt(t *testing.T, remote *judge.RemoteTeacher, prompt, critique string, at judge.HintPlacement) remoteWritten {
	t.Helper()
	dir := t.TempDir()
	cfg := Config{Method: rl.MethodCombine, SessionTimeout: -1, TeacherWrites: true, TeacherTokens: remoteTokens,
		Train: rl.SchedulerConfig{BatchSize: 1, VersionsDir: filepath.Join(dir, "versions")}}
	ctx := context.Background()
	f := &fixture{dir: dir, store: openStore(t, dir), engine: scripted.New(scripted.Options{}), trainer: &rltest.Trainer{}}
	t.Cleanup(func() { f.store.Close() })
	j := judge.New(&judge.EngineBackend{Engine: f.engine}, judge.Config{Verdict: judge.VerdictVotes,
		EvalVotes: 1, Retries: judge.NoRetries, MaxTokens: 512, HintTokens: 256}, quiet())
	teacher := &judge.Teacher{Engine: f.engine, Remote: remote, Placement: at}
	r, err := New(Options{Store: f.store, Judge: j, Teacher: teacher, Trainer: f.trainer, Publisher: f.engine, Log: quiet(), Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Scheduler().Recover(ctx); err != nil {
		t.Fatal(err)
	}
	msgs := []chat.Message{{Role: chat.RoleUser, Content: prompt}}
	rated := f.serve(t, "rated", msgs)
	if err := f.store.AddFeedback(ctx, rated.ID, store.Feedback{Rating: -1, Text: critique, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.judgeRound(ctx); err != nil {
		t.Fatal(err)
	}
	samples, err := f.store.ListSamples(ctx, store.TurnFilter{SessionID: rated.SessionID})
	if err != nil || len(samples) != 1 {
		t.Fatalf("samples: %v %v", samples, err)
	}
	// What the policy's own teacher writes: its greedy answer to the
	// hint-conditioned prompt.
	tp, err := teacher.WithAnswer(rated.Response, rated.ResponseIDs).Prompt(msgs, nil, rated.PromptText, critique)
	if err != nil {
		t.Fatal(err)
	}
	g, err := f.engine.Generate(ctx, engine.GenerateRequest{PromptIDs: f.engine.Format().Encode(tp), MaxTokens: remoteTokens}, func(engine.Token) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	rw := remoteWritten{sample: samples[0], teacher: teacher, msgs: msgs, rated: rated, policyFormat: f.engine.Format(), runner: r}
	for _, tok := range g.Tokens {
		rw.local, rw.localLP = append(rw.local, tok.ID), append(rw.localLP, tok.Logprob)
	}
	return rw
}

// metric reads the runner's remote-teacher counter for result.
func metric(t *testing.T, r *Runner, result string) float64 {
	t.Helper()
	return metricLabel(t, r, "result", result)
}

// teacherMetrics gathers r's teacher counters.
func teacherMetrics(t *testing.T, r *Runner) []*dto.MetricFamily {
	t.Helper()
	reg := prometheus.NewRegistry()
	if err := reg.Register(r.TeacherCollector()); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	return mfs
}

// metricLabel is the value of r's teacher counter whose label is
// name=value (−1 when none is).
func metricLabel(t *testing.T, r *Runner, name, value string) float64 {
	t.Helper()
	for _, mf := range teacherMetrics(t, r) {
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == name && l.GetValue() == value {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return -1
}

// TestRemoteTeacherWrites: with --teacher-url, the answer of another model
// (a second clawrl serving a tiny Qwen3 through its HTTP API) becomes the
// teacher-written response: the policy's tokenizer encodes its text, the
// stop token follows when it ended in time, and the policy's own teacher
// scores exactly those ids with the hint in context.
func TestRemoteTeacherWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a tiny model")
	}
	eng, err := native.Open(tinyModel(t), native.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	remote := &judge.RemoteTeacher{URL: teacherServer(t, eng), Model: "tiny", Timeout: time.Minute}
	const critique = "Be brief, please."
	rw := remoteWrittenTurn(t, remote, "write a haiku", critique)
	ctx := context.Background()

	tm, err := judge.TeacherPromptAt(rw.msgs, critique, judge.HintInUser)
	if err != nil {
		t.Fatal(err)
	}
	text, ended, err := remote.Answer(ctx, tm, remoteTokens)
	if err != nil {
		t.Fatal(err)
	}
	want := rw.policyFormat.Encode(text)
	switch {
	case len(want) >= remoteTokens:
		want = want[:remoteTokens]
	case ended:
		want = append(want, rw.policyFormat.StopIDs()[0])
	}
	s := rw.sample
	if !reflect.DeepEqual(s.TeacherResponseIDs, want) {
		t.Fatalf("teacher response %v (why %q, stats %+v), want the remote answer %q as the policy's tokens %v", s.TeacherResponseIDs, s.Why, remote.Stats(), text, want)
	}
	if reflect.DeepEqual(want, rw.local) {
		t.Fatal("the remote teacher wrote what the policy's teacher writes; the test shows nothing")
	}
	wantLP, _, err := rw.teacher.Logprobs(ctx, rw.msgs, nil, rw.rated.PromptText, want, critique)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s.TeacherLogprobs, wantLP) {
		t.Errorf("teacher logprobs %v, want the policy teacher's scores %v", s.TeacherLogprobs, wantLP)
	}
	if s.UseRL || !strings.Contains(s.Why, "teacher's response") {
		t.Errorf("sample: use RL %v, why %q", s.UseRL, s.Why)
	}
	if st := remote.Stats(); st.Written != 1 || st.FellBack != 0 {
		t.Errorf("stats %+v, want one written", st)
	}
	if got := metric(t, rw.runner, "written"); got != 1 {
		t.Errorf("metric written = %v", got)
	}
}

// TestRemoteTeacherFallsBack: a --teacher-url that fails — nothing
// listening, not an OpenAI endpoint, too slow, an answer with no content —
// leaves the write to the policy's own teacher, counted as a fallback. The
// prompts' cues give the policy's teacher words the feedback does not hold
// (judge.Refuse): the prompt's sentence, or its reasoning when the remote
// answer must have none but reasoning.
func TestRemoteTeacherFallsBack(t *testing.T) {
	scriptedURL := teacherServer(t, scripted.New(scripted.Options{}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	for _, tc := range []struct {
		name, url, prompt, critique string
		timeout                     time.Duration
		why                         string
	}{
		{"nothing listening", closed, cuedHaiku, "[[say: Short.]] Be brief.", time.Minute, "connection refused"},
		{"not an OpenAI endpoint", strings.TrimSuffix(scriptedURL, "/v1") + "/nope", cuedHaiku, "[[say: Short.]] Be brief.", time.Minute, "HTTP 404"},
		{"too slow", scriptedURL, cuedHaiku, "[[slow:100]][[say: Short.]] Be brief.", 30 * time.Millisecond, "deadline"},
		{"no content", scriptedURL, "write a haiku [[think:autumn leaves drift down]]", "Be brief, please.", time.Minute, "empty answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			remote := &judge.RemoteTeacher{URL: tc.url, Model: "m", Timeout: tc.timeout}
			rw := remoteWrittenTurn(t, remote, tc.prompt, tc.critique)
			if !reflect.DeepEqual(rw.sample.TeacherResponseIDs, rw.local) || !reflect.DeepEqual(rw.sample.TeacherLogprobs, rw.localLP) {
				t.Fatalf("teacher response %v (why %q), want the policy's own teacher's %v", rw.sample.TeacherResponseIDs, rw.sample.Why, rw.local)
			}
			st := remote.Stats()
			if st.Written != 0 || st.FellBack != 1 || !strings.Contains(st.LastError, tc.why) {
				t.Errorf("stats %+v, want one fallback for %q", st, tc.why)
			}
			if got := metric(t, rw.runner, "fallback"); got != 1 {
				t.Errorf("metric fallback = %v", got)
			}
		})
	}
}

// TestRemoteTeacherSettings: the flags' checks.
func TestRemoteTeacherSettings(t *testing.T) {
	for _, tc := range []struct {
		s   RemoteTeacherSettings
		opd string
		ok  bool
	}{
		{RemoteTeacherSettings{}, "student", true},
		{RemoteTeacherSettings{URL: "http://127.0.0.1:1/v1", Model: "m"}, "teacher", true},
		{RemoteTeacherSettings{URL: "http://127.0.0.1:1/v1", Model: "m"}, "both", true},
		{RemoteTeacherSettings{URL: "http://127.0.0.1:1/v1", Model: "m"}, "student", false},
		{RemoteTeacherSettings{URL: "http://127.0.0.1:1/v1"}, "teacher", false},
		{RemoteTeacherSettings{URL: "127.0.0.1:1", Model: "m"}, "teacher", false},
		{RemoteTeacherSettings{URL: "ftp://h/v1", Model: "m"}, "teacher", false},
	} {
		r, err := tc.s.build(tc.opd, quiet())
		if (err == nil) != tc.ok {
			t.Errorf("%+v with --opd-response %s: err %v, want ok %v", tc.s, tc.opd, err, tc.ok)
		}
		if err == nil && (r != nil) != (tc.s.URL != "") {
			t.Errorf("%+v: remote %v", tc.s, r)
		}
	}
}

// TestRemoteTeacherRevises: under --hint-placement revise the remote
// teacher is asked the conversation as it happened (the question, the
// policy's answer, the feedback as the next user message), as the policy's
// own teacher would be, and the policy's revise teacher scores its answer.
// The remote server is a second clawrl on the scripted engine, which reads
// its cues after the last assistant turn, where [[again]] repeats that
// turn: only a request ending [assistant answer, user feedback] gives the
// policy's answer ("ok: write a haiku") followed by the feedback's sign-off.
func TestRemoteTeacherRevises(t *testing.T) {
	remote := &judge.RemoteTeacher{URL: teacherServer(t, scripted.New(scripted.Options{})), Model: "scripted", Timeout: time.Minute}
	const critique = "[[again]][[say: Hope this helps!]] End with the sign-off."
	rw := remoteWrittenTurnAt(t, remote, "write a haiku", critique, judge.HintAsRevision)
	s := rw.sample
	if st := remote.Stats(); st.Written != 1 || st.FellBack != 0 {
		t.Fatalf("stats %+v (why %q), want one written", st, s.Why)
	}
	if got := rw.policyFormat.Decode(s.TeacherResponseIDs); got != "ok: write a haiku Hope this helps!<|im_end|>" {
		t.Fatalf("remote teacher wrote %q: it did not see the feedback as the user's next message", got)
	}
	wantLP, _, err := rw.teacher.WithAnswer(rw.rated.Response, rw.rated.ResponseIDs).Logprobs(context.Background(), rw.msgs, nil, rw.rated.PromptText, s.TeacherResponseIDs, critique)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s.TeacherLogprobs, wantLP) {
		t.Errorf("teacher logprobs %v, want the revise teacher's scores %v", s.TeacherLogprobs, wantLP)
	}
}

// TestTeacherSeedRepeats: the i-th of a turn's --teacher-samples answers
// is drawn with TeacherSeed, which depends on the turn's prompt, its
// rated answer, the feedback and i alone; a real clawrl behind
// --teacher-url (the tiny model, sampled at temperature 1) gives the same
// answer for the same seed, and the seeds of one turn's answers draw
// different ones.
func TestTeacherSeedRepeats(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a tiny model")
	}
	turn := store.Turn{PromptText: "<|im_start|>user\nwrite a haiku<|im_end|>\n<|im_start|>assistant\n"}
	seen := map[int64]bool{}
	for _, hint := range []string{"Be brief.", "Answer in French."} {
		for i := range 4 {
			s := TeacherSeed(turn, hint, i)
			if s < 0 || seen[s] || s != TeacherSeed(turn, hint, i) {
				t.Fatalf("TeacherSeed(%q, %d) = %d: negative, repeated across answers or unstable", hint, i, s)
			}
			seen[s] = true
		}
	}
	again := turn
	again.ResponseText = "Another answer."
	if TeacherSeed(again, "Be brief.", 0) == TeacherSeed(turn, "Be brief.", 0) {
		t.Fatal("the same question answered otherwise draws the same seed")
	}
	bare := store.Turn{Messages: []chat.Message{{Role: chat.RoleUser, Content: "write a haiku"}}}
	if TeacherSeed(bare, "Be brief.", 0) == TeacherSeed(store.Turn{Messages: []chat.Message{{Role: chat.RoleUser, Content: "write a poem"}}}, "Be brief.", 0) {
		t.Fatal("a turn recorded without its prompt text: the seed ignores its messages")
	}

	eng, err := native.Open(tinyModel(t), native.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	remote := &judge.RemoteTeacher{URL: teacherServer(t, eng), Model: "tiny", Timeout: time.Minute}
	msgs, err := judge.TeacherPromptAt([]chat.Message{{Role: chat.RoleUser, Content: "write a haiku"}}, "Be brief.", judge.HintInUser)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	answers := map[string]bool{}
	for i := range 4 {
		seed := TeacherSeed(turn, "Be brief.", i)
		sp := engine.Sampling{Temperature: 1, Seed: &seed}
		a, _, err := remote.AnswerAt(ctx, msgs, remoteTokens, sp)
		if err != nil {
			t.Fatal(err)
		}
		b, _, err := remote.AnswerAt(ctx, msgs, remoteTokens, sp)
		if err != nil {
			t.Fatal(err)
		}
		if a != b {
			t.Fatalf("answer %d drawn twice with seed %d: %q, then %q", i, seed, a, b)
		}
		answers[a] = true
	}
	if len(answers) < 2 {
		t.Errorf("four seeds drew %d distinct answers, want several: %v", len(answers), answers)
	}
}
