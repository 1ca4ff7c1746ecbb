package agent

import (
	"context"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/engine/native"
	"github.com/clawrl/clawrl/env"
	"github.com/clawrl/clawrl/env/sandbox"
	"github.com/clawrl/clawrl/env/toolcall"
	"github.com/clawrl/clawrl/judge"
	"github.com/clawrl/clawrl/model"
	"github.com/clawrl/clawrl/rl"
	"github.com/clawrl/clawrl/safetensors"
	"github.com/clawrl/clawrl/store"
	"github.com/clawrl/clawrl/store/sqlite"
	"github.com/clawrl/clawrl/tokenizer/vocab"
	"github.com/clawrl/clawrl/train"
)

func TestAdvantagesPerTaskAndStep(t *testing.T) {
	steps := func(n int) []Step { return make([]Step, n) }
	g := Group{Episodes: []Episode{
		{Reward: 1, Steps: steps(2)},
		{Reward: -1, Steps: steps(1)},
		{Reward: 0, Steps: steps(3)},
	}}
	adv, err := Advantages(g)
	if err != nil {
		t.Fatal(err)
	}
	// Step 0 over rewards {1, −1, 0}: mean 0, std 1.
	for e, want := range []float64{1, -1, 0} {
		if math.Abs(adv[e][0]-want/(1+1e-6)) > 1e-9 {
			t.Errorf("episode %d step 0: %v, want %v", e, adv[e][0], want)
		}
	}
	// Step 1 over {1, 0}: ±0.707; step 2 has one episode: 0.
	if math.Abs(adv[0][1]-math.Sqrt(0.5)/(1e-6+math.Sqrt(0.5))*0.5/math.Sqrt(0.5)) > 1e-5 || adv[0][1] <= 0 || adv[2][1] >= 0 {
		t.Errorf("step 1: %v %v", adv[0][1], adv[2][1])
	}
	if adv[2][2] != 0 {
		t.Errorf("a step no other episode reached: %v, want 0", adv[2][2])
	}
	// Centring only: r − mean per (task, step).
	adv, err = AdvantagesNorm(g, NormMean)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		e, k int
		want float64
	}{{0, 0, 1}, {1, 0, -1}, {2, 0, 0}, {0, 1, 0.5}, {2, 1, -0.5}, {2, 2, 0}} {
		if math.Abs(adv[c.e][c.k]-c.want) > 1e-12 {
			t.Errorf("mean-centred episode %d step %d: %v, want %v", c.e, c.k, adv[c.e][c.k], c.want)
		}
	}
	// A group where nothing succeeded and one episode earned partial
	// credit: the std scales that gap up past a success's advantage
	// elsewhere; centring keeps it at its size.
	partial := Group{Episodes: []Episode{{Reward: 0, Steps: steps(1)}}}
	for range 7 {
		partial.Episodes = append(partial.Episodes, Episode{Reward: -1, Steps: steps(1)})
	}
	std, _ := AdvantagesNorm(partial, NormStd)
	mean, _ := AdvantagesNorm(partial, NormMean)
	if std[0][0] < 2 || math.Abs(mean[0][0]-0.875) > 1e-12 {
		t.Errorf("partial credit: std-normalised %v (want > 2), centred %v (want 0.875)", std[0][0], mean[0][0])
	}
	if _, err := AdvantagesNorm(g, "median"); err == nil {
		t.Error("an unknown normalisation was accepted")
	}
	if lo, hi := Wilson(5, 10); math.Abs(lo-0.2366) > 1e-3 || math.Abs(hi-0.7634) > 1e-3 {
		t.Errorf("Wilson(5, 10) = %v, %v", lo, hi)
	}
}

type rig struct {
	eng   *native.Engine
	store *sqlite.Store
	sched *rl.Scheduler
	dir   string
}

// newRig is the training stack on a random tiny Qwen3 (real tokenizer and
// chat template): the native engine, the SQLite store, the LoRA trainer and
// the scheduler.
func newRig(t *testing.T, dir string, batch int) *rig {
	t.Helper()
	modelDir := filepath.Join(dir, "model")
	if _, err := os.Stat(filepath.Join(modelDir, "config.json")); err != nil {
		cfg, err := model.NewConfig(model.Qwen3, model.SizeTiny)
		if err != nil {
			t.Fatal(err)
		}
		if err := model.WriteRandom(modelDir, cfg, 3, safetensors.F32); err != nil {
			t.Fatal(err)
		}
		if err := vocab.Write("qwen3", modelDir); err != nil {
			t.Fatal(err)
		}
	}
	eng, err := native.Open(modelDir, native.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	st, err := sqlite.OpenDir(context.Background(), filepath.Join(dir, "data"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	lora := train.DefaultLoRA()
	lora.Rank, lora.Alpha = 4, 8
	tr, err := rl.NewNativeTrainerFor(eng.Model(), train.Config{Mode: train.ModeLoRA, LoRA: lora, AdamW: train.DefaultAdamW(1e-3)}, rl.DefaultStepConfig())
	if err != nil {
		t.Fatal(err)
	}
	sched := rl.NewScheduler(st, tr, eng, nil, rl.SchedulerConfig{Method: rl.MethodRL, BatchSize: batch,
		VersionsDir: filepath.Join(dir, "data", "versions"), Poll: 50 * time.Millisecond}, nil)
	if err := sched.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	return &rig{eng: eng, store: st, sched: sched, dir: dir}
}

func toolcallPool(t *testing.T) *env.Pool {
	t.Helper()
	b, err := sandbox.NewBwrap(sandbox.Limits{})
	if err != nil {
		if os.Getenv("CLAWRL_REQUIRE_REFS") == "1" {
			t.Fatalf("bubblewrap required: %v", err)
		}
		t.Skipf("no bubblewrap sandbox: %v", err)
	}
	p, err := env.NewPool(env.PoolConfig{Limit: 8, Lease: time.Minute}, &toolcall.Kind{Sandbox: b})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Shutdown() })
	return p
}

// checkLedger asserts what crash safety promises: no agent turn is left
// between states, every dropped one says why, and the turns marked trained
// are exactly the samples the recorded versions trained on.
func checkLedger(t *testing.T, st *sqlite.Store) (trained, dropped int) {
	t.Helper()
	ctx := context.Background()
	turns, err := st.ListTurns(ctx, store.TurnFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tu := range turns {
		switch tu.State {
		case store.Generated, store.Observed, store.Judged:
			t.Errorf("turn %s left %s", tu.ID, tu.State)
		case store.Dropped:
			dropped++
			if !strings.HasPrefix(tu.DropReason, "agent: ") && !strings.HasPrefix(tu.DropReason, "stale") {
				t.Errorf("turn %s dropped for %q", tu.ID, tu.DropReason)
			}
		case store.Trained:
			trained++
		}
		if len(tu.ResponseIDs) != len(tu.BehaviourLogprobs) || len(tu.PromptIDs) == 0 {
			t.Errorf("turn %s: %d prompt ids, %d response ids, %d logprobs", tu.ID, len(tu.PromptIDs), len(tu.ResponseIDs), len(tu.BehaviourLogprobs))
		}
		if tu.MaxTokens < 1 || len(tu.ResponseIDs) > tu.MaxTokens {
			t.Errorf("turn %s: %d response ids under a limit of %d", tu.ID, len(tu.ResponseIDs), tu.MaxTokens)
		}
	}
	versions, err := st.Versions(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	inVersions := 0
	for _, v := range versions {
		inVersions += v.Metrics.Samples
	}
	if inVersions != trained {
		t.Errorf("%d turns trained, versions trained on %d samples", trained, inVersions)
	}
	return trained, dropped
}

func TestTrainCompletesAVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tiny model")
	}
	pool := toolcallPool(t)
	r := newRig(t, t.TempDir(), 4)
	seed := int64(1)
	run, err := New(Options{Engine: r.eng, Env: pool, Store: r.store,
		Config: Config{Samples: 2, MaxSteps: 2, MaxTokens: 12, Concurrency: 4, Run: "t", Sampling: r.sampling(&seed)}})
	if err != nil {
		t.Fatal(err)
	}
	tasks := toolcall.Generate(6, 1, env.SplitTrain, "tc")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := run.Train(ctx, TrainOptions{Tasks: tasks, Scheduler: r.sched, Versions: 1, StatusDir: r.dir}); err != nil {
		t.Fatal(err)
	}
	if v := r.sched.Current().Version; v < 1 {
		t.Fatalf("version %d after the run", v)
	}
	if r.eng.Version() < 1 {
		t.Fatalf("engine serves version %d", r.eng.Version())
	}
	if _, err := Recover(ctx, r.store); err != nil {
		t.Fatal(err)
	}
	trained, _ := checkLedger(t, r.store)
	if trained < 4 {
		t.Fatalf("%d turns trained", trained)
	}
	snap, ok, err := ReadStatus(r.dir)
	if err != nil || !ok || snap.Done < 2 || snap.Groups < 1 || len(snap.ByVersion) == 0 {
		t.Fatalf("status %+v %v %v", snap, ok, err)
	}
	// The judgment of a trained step carries the environment's verdict.
	turns, _ := r.store.ListTurns(ctx, store.TurnFilter{States: []store.TurnState{store.Trained}, Limit: 1})
	j, err := r.store.Judgment(ctx, turns[0].ID)
	if err != nil || j.Judge != "env:toolcall" || !strings.Contains(j.Votes[0].Raw, `"expected"`) {
		t.Fatalf("judgment %+v %v", j, err)
	}
}

// TestGroupsWaitForTheTrainer: with MaxQueued samples waiting, no new group
// starts until the trainer takes (or drops) some.
func TestGroupsWaitForTheTrainer(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a tiny model")
	}
	pool := toolcallPool(t)
	r := newRig(t, t.TempDir(), 1000)
	seed := int64(1)
	run, err := New(Options{Engine: r.eng, Env: pool, Store: r.store,
		Config: Config{Samples: 2, MaxSteps: 1, MaxTokens: 8, Run: "q", Sampling: r.sampling(&seed)}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := run.RunGroup(ctx, toolcall.Generate(1, 1, env.SplitTrain, "q")[0], 0); err != nil {
		t.Fatal(err)
	}
	ready, _, err := r.store.ReadySamples(ctx, 0)
	if err != nil || len(ready) == 0 {
		t.Fatalf("%d ready samples after a group: %v", len(ready), err)
	}
	n := len(ready)
	for _, limit := range []int{n + 1, 0, -1} {
		if err := run.waitForRoom(ctx, limit); err != nil {
			t.Fatalf("limit %d: %v", limit, err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- run.waitForRoom(ctx, n) }()
	select {
	case err := <-done:
		t.Fatalf("returned (%v) with %d of %d samples queued", err, n, n)
	case <-time.After(600 * time.Millisecond):
	}
	if err := r.store.DropTurn(ctx, ready[0].TurnID, "stale: taken by the test"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("still waiting after a sample left the queue")
	}
}

// TestResumedRunReplaysATask: a run resumed on the same store counts rounds
// from 0 again; playing a task the earlier run played must not collide with
// its recorded sessions (it did: "UNIQUE constraint failed: sessions.key").
func TestResumedRunReplaysATask(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a tiny model")
	}
	pool := toolcallPool(t)
	r := newRig(t, t.TempDir(), 1000)
	task := toolcall.Generate(1, 1, env.SplitTrain, "again")[0]
	for run := range 2 {
		seed := int64(1)
		runner, err := New(Options{Engine: r.eng, Env: pool, Store: r.store,
			Config: Config{Samples: 1, MaxSteps: 1, MaxTokens: 4, Run: "resume", Sampling: r.sampling(&seed)}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := runner.RunGroup(context.Background(), task, 0); err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
	}
}

func (r *rig) sampling(seed *int64) engine.Sampling {
	return engine.Sampling{Temperature: 1, Seed: seed}
}

// An environment server that dies mid-run fails only its episodes: their
// steps are dropped with the reason, the episodes run again on the server
// that comes back, and the groups complete.
func TestEnvServerKilledMidRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a tiny model")
	}
	pool := toolcallPool(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	srv := &http.Server{}
	// The server dies at the first step it is sent (the connection drops
	// without an answer), and a fresh one comes up on the same address.
	var once sync.Once
	inner := env.Handler(pool, "", nil)
	srv.Handler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if strings.HasSuffix(req.URL.Path, "/step") {
			once.Do(func() {
				go srv.Close()
				pool.Shutdown()
				pool2, err := env.NewPool(env.PoolConfig{Limit: 8}, &toolcall.Kind{Sandbox: mustBwrap(t)})
				if err != nil {
					t.Error(err)
					return
				}
				var ln2 net.Listener
				for range 100 {
					if ln2, err = net.Listen("tcp", addr); err == nil {
						break
					}
					time.Sleep(10 * time.Millisecond)
				}
				if err != nil {
					t.Error(err)
					return
				}
				srv2 := &http.Server{Handler: env.Handler(pool2, "", nil)}
				t.Cleanup(func() { srv2.Close(); pool2.Shutdown() })
				go srv2.Serve(ln2)
			})
			panic(http.ErrAbortHandler)
		}
		inner.ServeHTTP(w, req)
	})
	go srv.Serve(ln)
	client, err := env.NewClient("http://"+addr, "")
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, t.TempDir(), 1000) // never trains: this test is about recording
	run, err := New(Options{Engine: r.eng, Env: client, Store: r.store,
		Config: Config{Samples: 2, MaxSteps: 3, MaxTokens: 8, Concurrency: 2, Attempts: 5, Run: "k"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	task := env.Task{ID: "k1", Env: toolcall.Name, Prompt: "What is 2 + 2?", Answer: "4", MaxSteps: 3}
	g, err := run.RunGroup(ctx, task, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Episodes) != 2 || g.Failed == 0 {
		t.Fatalf("group %d episodes, %d failed; want 2 and at least one failure", len(g.Episodes), g.Failed)
	}
	turns, _ := r.store.ListTurns(ctx, store.TurnFilter{})
	var dropped, ready int
	for _, tu := range turns {
		switch tu.State {
		case store.Dropped:
			dropped++
			if !strings.HasPrefix(tu.DropReason, ReasonEnvFailed) {
				t.Errorf("dropped for %q", tu.DropReason)
			}
		case store.Ready:
			ready++
		default:
			t.Errorf("turn %s left %s", tu.ID, tu.State)
		}
	}
	steps := 0
	for _, ep := range g.Episodes {
		steps += len(ep.Steps)
	}
	if dropped == 0 || ready != steps {
		t.Fatalf("%d dropped, %d ready; the group's episodes have %d steps", dropped, ready, steps)
	}
}

func mustBwrap(t *testing.T) sandbox.Provider {
	b, err := sandbox.NewBwrap(sandbox.Limits{})
	if err != nil {
		t.Error(err)
	}
	return b
}

func TestRecoverDropsUnfinishedEpisodes(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.OpenDir(ctx, t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	add := func(key string, observe bool) string {
		s := store.Session{Key: key}
		if err := st.CreateSession(ctx, &s); err != nil {
			t.Fatal(err)
		}
		tu := store.Turn{ID: newID("t-"), SessionID: s.ID, PromptIDs: []int32{1}, ResponseIDs: []int32{2}, BehaviourLogprobs: []float32{-1}}
		if err := st.InsertTurn(ctx, &tu); err != nil {
			t.Fatal(err)
		}
		if observe {
			if err := st.ObserveTurn(ctx, tu.ID, []chat.Message{{Role: "tool", Content: "x"}}, store.NextTool, time.Now()); err != nil {
				t.Fatal(err)
			}
		}
		return tu.ID
	}
	a := add("agent/r/t/r0/s0/a1", false)
	b := add("agent/r/t/r0/s1/a1", true)
	c := add("chat-session", true)
	n, err := Recover(ctx, st)
	if err != nil || n != 2 {
		t.Fatalf("recover dropped %d, %v", n, err)
	}
	for id, want := range map[string]store.TurnState{a: store.Dropped, b: store.Dropped, c: store.Observed} {
		tu, _ := st.Turn(ctx, id)
		if tu.State != want {
			t.Errorf("turn %s: %s, want %s", id, tu.State, want)
		}
		if want == store.Dropped && tu.DropReason != ReasonInterrupted {
			t.Errorf("reason %q", tu.DropReason)
		}
	}
}

// The PRM term: the judge (the tiny model's base weights) scores every
// step, and the episode's reward is outcome + coef · mean step score.
func TestPRMTerm(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a tiny model")
	}
	pool := toolcallPool(t)
	r := newRig(t, t.TempDir(), 1000)
	scorer := JudgeScorer{Judge: judge.New(&judge.EngineBackend{Engine: r.eng}, judge.Config{EvalVotes: 1, MaxTokens: 8}, nil)}
	run, err := New(Options{Engine: r.eng, Env: pool, PRM: scorer, Config: Config{Samples: 1, MaxSteps: 2, MaxTokens: 8, PRMCoef: 0.5}})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := run.RunEpisode(context.Background(), env.Task{ID: "p", Env: toolcall.Name, Prompt: "What is 2 + 3?", Answer: "5"}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, s := range ep.Steps {
		if s.PRMScore != -1 && s.PRMScore != 0 && s.PRMScore != 1 {
			t.Fatalf("step score %v", s.PRMScore)
		}
		sum += s.PRMScore
	}
	if want := ep.Evaluation.Reward + 0.5*sum/float64(len(ep.Steps)); len(ep.Steps) == 0 || math.Abs(ep.Reward-want) > 1e-12 {
		t.Fatalf("reward %v, want %v over %d steps", ep.Reward, want, len(ep.Steps))
	}
	if _, err := New(Options{Engine: r.eng, Env: pool, Config: Config{PRMCoef: 1}}); err == nil {
		t.Fatal("a PRM coefficient without a scorer was accepted")
	}
}
