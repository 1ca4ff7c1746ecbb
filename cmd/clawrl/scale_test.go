package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/store"
	"github.com/clawrl/clawrl/store/postgres"
	"github.com/clawrl/clawrl/store/postgres/pgtest"
)

// trainerProcess is a running `clawrl trainer`.
type trainerProcess struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	log  bytes.Buffer
	done chan error
}

func (p *trainerProcess) logText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// startTrainer runs `clawrl trainer` and waits until its loops run.
func startTrainer(t *testing.T, exe string, args ...string) *trainerProcess {
	t.Helper()
	p := &trainerProcess{done: make(chan error, 1)}
	p.cmd = exec.Command(exe, append([]string{"trainer"}, args...)...)
	p.cmd.Env = append(os.Environ(), testEngineEnv+"=")
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.log.WriteString(line + "\n")
			p.mu.Unlock()
			if strings.Contains(line, `msg="trainer started"`) {
				close(started)
			}
		}
		p.done <- p.cmd.Wait()
	}()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	select {
	case <-started:
		return p
	case err := <-p.done:
		t.Fatalf("clawrl trainer exited before starting: %v\n%s", err, p.logText())
	case <-time.After(2 * time.Minute):
		t.Fatalf("clawrl trainer did not start within 2 minutes\n%s", p.logText())
	}
	return nil
}

func kill9(t *testing.T, cmd *exec.Cmd, done chan error) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-done
}

// TestScaleOutOnPostgres is the scale-out setup end to end with the real
// binaries: one Postgres, two gateways (`serve --no-learn`) and one
// `clawrl trainer`. 200 two-turn sessions alternate between the gateways —
// the first turn on one, the second (which carries the first's next state)
// on the other, the rating of the second through the first again. Midway a
// gateway and then the trainer are killed with SIGKILL and restarted.
// Afterwards every completed response is in the store once, every first
// turn was paired with its next state across gateways, every sample was
// trained by exactly one version (the versions' sample counts add up to
// the trained samples), and the gateways serve the newest version.
func TestScaleOutOnPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs clawrl gateways and a trainer on Postgres")
	}
	srv := pgtest.New(t)
	url := srv.Database(t, "scaleout")
	exe := buildClawrl(t)
	trainerData := t.TempDir()
	const batch = 8
	trainerArgs := []string{"--store", url, "--data", trainerData, "--model", "random:tiny", "--method", "rl", "--batch-size", fmt.Sprint(batch),
		"--judge-votes", "1", "--judge-max-tokens", "4", "--judge-retries", "0", "--lora-rank", "4", "--max-staleness", "100000"}
	tr := startTrainer(t, exe, trainerArgs...)
	modelDir := filepath.Join(trainerData, "models", "tiny-qwen3")
	gatewayArgs := []string{"--store", url, "--no-learn", "--model", modelDir, "--max-tokens", "8"}
	gw := []*serveProcess{
		startServeWith(t, exe, t.TempDir(), "", 2*time.Minute, gatewayArgs...),
		startServeWith(t, exe, t.TempDir(), "", 2*time.Minute, gatewayArgs...),
	}
	var gwMu sync.Mutex
	addr := func(i int) string {
		gwMu.Lock()
		defer gwMu.Unlock()
		return gw[i%2].addr
	}

	ctx := context.Background()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}, Timeout: time.Minute}
	// post sends body to gateway i, trying the other one when i is down (it
	// may be mid-restart): a client behind a load balancer sees the same.
	post := func(i int, path string, body map[string]any, session string) ([]byte, error) {
		var lastErr error
		for attempt := range 40 {
			raw, _ := json.Marshal(body)
			req, _ := http.NewRequest(http.MethodPost, "http://"+addr(i+attempt)+path, bytes.NewReader(raw))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Session-Id", session)
			resp, err := client.Do(req)
			if err != nil {
				lastErr = err
				time.Sleep(250 * time.Millisecond)
				continue
			}
			var out bytes.Buffer
			_, err = out.ReadFrom(resp.Body)
			resp.Body.Close()
			if err == nil && resp.StatusCode == http.StatusOK {
				return out.Bytes(), nil
			}
			lastErr = fmt.Errorf("HTTP %d: %s (%v)", resp.StatusCode, out.Bytes(), err)
			time.Sleep(250 * time.Millisecond)
		}
		return nil, lastErr
	}
	complete := func(i int, msgs []any, session string) (string, string, error) {
		out, err := post(i, "/v1/chat/completions", map[string]any{"messages": msgs}, session)
		if err != nil {
			return "", "", err
		}
		var c struct {
			ID      string `json:"id"`
			Choices []struct {
				Message struct {
					Content string `json:"content"`
				} `json:"message"`
			} `json:"choices"`
		}
		if err := json.Unmarshal(out, &c); err != nil || c.ID == "" || len(c.Choices) != 1 {
			return "", "", fmt.Errorf("completion %s: %v", out, err)
		}
		return c.ID, c.Choices[0].Message.Content, nil
	}

	const sessions = 200
	type sessionRun struct{ first, second string }
	runs := make([]sessionRun, sessions)
	var doneMu sync.Mutex
	done := 0
	work := make(chan int)
	var wg sync.WaitGroup
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				session := fmt.Sprintf("scale-%03d", i)
				u1 := map[string]any{"role": "user", "content": fmt.Sprintf("question %d", i)}
				first, answer, err := complete(i, []any{u1}, session)
				if err != nil {
					t.Errorf("session %d, first turn: %v", i, err)
					continue
				}
				msgs := []any{u1, map[string]any{"role": "assistant", "content": answer},
					map[string]any{"role": "user", "content": fmt.Sprintf("follow-up %d", i)}}
				second, _, err := complete(i+1, msgs, session)
				if err != nil {
					t.Errorf("session %d, second turn: %v", i, err)
					continue
				}
				if _, err := post(i, "/v1/feedback", map[string]any{"id": second, "rating": []int{1, -1}[i%2]}, session); err != nil {
					t.Errorf("session %d, feedback: %v", i, err)
					continue
				}
				doneMu.Lock()
				runs[i] = sessionRun{first, second}
				done++
				doneMu.Unlock()
			}
		}()
	}
	progress := func() int {
		doneMu.Lock()
		defer doneMu.Unlock()
		return done
	}
	killer := make(chan struct{})
	go func() {
		defer close(killer)
		waitFor := func(n int) {
			for progress() < n {
				time.Sleep(20 * time.Millisecond)
			}
		}
		waitFor(60)
		kill9(t, gw[1].cmd, gw[1].done)
		t.Logf("killed gateway 1 after %d sessions", progress())
		restarted := startServeWith(t, exe, t.TempDir(), "", 2*time.Minute, gatewayArgs...)
		gwMu.Lock()
		gw[1] = restarted
		gwMu.Unlock()
		waitFor(120)
		kill9(t, tr.cmd, tr.done)
		t.Logf("killed the trainer after %d sessions", progress())
		tr = startTrainer(t, exe, trainerArgs...)
	}()
	for i := range sessions {
		work <- i
	}
	close(work)
	wg.Wait()
	<-killer
	if t.Failed() {
		t.FailNow()
	}

	st, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// The trainer drains: everything judged, fewer than a batch left ready.
	deadline := time.Now().Add(5 * time.Minute)
	for {
		stats, err := st.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if stats.AwaitingJudge == 0 && stats.AwaitingTrainer < batch {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("trainer did not drain: %+v\n%s", stats, tr.logText())
		}
		time.Sleep(200 * time.Millisecond)
	}

	turns, err := st.ListTurns(ctx, store.TurnFilter{})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]store.Turn{}
	bySession := map[string][]store.Turn{}
	for _, tn := range turns {
		byID[tn.ID] = tn
		bySession[tn.SessionID] = append(bySession[tn.SessionID], tn)
	}
	for i, r := range runs {
		first, ok1 := byID[r.first]
		second, ok2 := byID[r.second]
		if !ok1 || !ok2 {
			t.Errorf("session %d: completed turns %s (%v), %s (%v) not both in the store", i, r.first, ok1, r.second, ok2)
			continue
		}
		// A gateway killed after committing a turn and before answering
		// leaves that turn to the client's retry, which supersedes it: the
		// lost copy is dropped naming the very next turn, which is the same
		// request. Apart from those the session is exactly the two answered
		// turns, the first paired with the second.
		ss := slices.Clone(bySession[first.SessionID])
		slices.SortFunc(ss, func(a, b store.Turn) int { return a.Index - b.Index })
		var live []string
		lost := 0
		for j, o := range ss {
			if !strings.HasPrefix(o.DropReason, store.SupersededPrefix) {
				live = append(live, o.ID)
				continue
			}
			lost++
			if o.State != store.Dropped || j+1 == len(ss) || o.DropReason != store.SupersededBy(ss[j+1].ID) ||
				!slices.EqualFunc(o.Messages, ss[j+1].Messages, func(a, b chat.Message) bool { return a.Role == b.Role && a.Content == b.Content }) {
				t.Errorf("session %d: turn %s at %d is %s (%q), not a lost copy its retry replaced", i, o.ID, o.Index, o.State, o.DropReason)
			}
		}
		if first.SessionID != second.SessionID || !slices.Equal(live, []string{first.ID, second.ID}) {
			t.Errorf("session %d: turns in sessions %s/%s, the session's live turns %v, want exactly %s, %s", i, first.SessionID, second.SessionID, live, first.ID, second.ID)
		} else if lost > 0 {
			t.Logf("session %d: %d request(s) retried after the gateway's kill, the lost copies superseded", i, lost)
		}
		if first.NextStateKind != store.NextUser || first.State == store.Generated || first.State == store.Expired {
			t.Errorf("session %d: first turn %s is %s with next state %q: not paired with the second", i, first.ID, first.State, first.NextStateKind)
		}
	}
	samples, err := st.ListSamples(ctx, store.TurnFilter{})
	if err != nil {
		t.Fatal(err)
	}
	versions, err := st.Versions(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	trained, ready, held := 0, 0, 0
	for _, smp := range samples {
		tn := byID[smp.TurnID]
		switch {
		case smp.TrainedVersion > 0 && tn.State == store.Trained:
			trained++
		case smp.TrainedVersion == 0 && tn.State == store.Ready:
			ready++
		case smp.TrainedVersion == 0 && tn.State == store.Dropped && strings.HasPrefix(tn.DropReason, "held:"):
			held++ // a step whose users liked 6 of its 8 (--hold-liked, on by default): spent, never trained
		default:
			t.Errorf("sample %s: trained by version %d but turn is %s (%s)", smp.TurnID, smp.TrainedVersion, tn.State, tn.DropReason)
		}
	}
	sum := 0
	for _, v := range versions {
		sum += v.Metrics.Samples
	}
	if sum != trained {
		t.Errorf("versions trained %d samples in all, but %d samples are marked trained: a sample was trained twice or lost", sum, trained)
	}
	if len(samples) < sessions || ready >= batch {
		t.Errorf("%d samples (%d trained, %d ready), want at least %d (every rated turn) and fewer than %d left", len(samples), trained, ready, sessions, batch)
	}
	if len(versions) == 0 {
		t.Fatal("no version trained")
	}
	// Both gateways serve the newest version (they follow the store).
	latest := versions[0].Version
	for i := range 2 {
		deadline := time.Now().Add(30 * time.Second)
		for {
			id, _, err := complete(i, []any{map[string]any{"role": "user", "content": "which version?"}}, fmt.Sprintf("probe-%d", i))
			if err != nil {
				t.Fatal(err)
			}
			got, err := st.Turn(ctx, id)
			if err == nil && got.PolicyVersion == latest {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("gateway %d serves version %d, want %d", i, got.PolicyVersion, latest)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	t.Logf("%d sessions, %d turns, %d samples: %d trained in %d versions, %d held, %d ready", sessions, len(turns), len(samples), trained, len(versions), held, ready)
	// How long a committed version took to reach each gateway's engine
	// (the follower's log: LISTEN/NOTIFY, then loading the adapter).
	var lags []time.Duration
	for i := range 2 {
		for _, line := range strings.Split(gw[i].logText(), "\n") {
			if !strings.Contains(line, `msg="serving new version"`) {
				continue
			}
			for _, f := range strings.Fields(line) {
				if v, ok := strings.CutPrefix(f, "since_commit="); ok {
					if d, err := time.ParseDuration(v); err == nil {
						lags = append(lags, d)
					}
				}
			}
		}
	}
	if len(lags) > 0 {
		slices.Sort(lags)
		t.Logf("commit → serving on a gateway: %d loads, median %v, max %v", len(lags), lags[len(lags)/2], lags[len(lags)-1])
	}
}
