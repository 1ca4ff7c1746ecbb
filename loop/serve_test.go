package loop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/clawrl/clawrl/api"
	"github.com/clawrl/clawrl/engine/scripted"
	"github.com/clawrl/clawrl/judge"
	"github.com/clawrl/clawrl/rl"
	"github.com/clawrl/clawrl/rl/rltest"
	"github.com/clawrl/clawrl/store"
)

// client talks to the gateway the way an agent does.
type client struct {
	t   testing.TB
	url string
}

type msg struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

func (c client) post(path string, body any, headers map[string]string) (int, []byte) {
	c.t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, c.url+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// chat sends the conversation and returns the completion id and answer.
func (c client) chat(session string, msgs []msg) (string, string) {
	c.t.Helper()
	code, body := c.post("/v1/chat/completions", map[string]any{"model": "scripted", "messages": msgs}, map[string]string{"X-Session-Id": session})
	if code != http.StatusOK {
		c.t.Fatalf("chat: HTTP %d: %s", code, body)
	}
	var resp struct {
		ID      string `json:"id"`
		Choices []struct {
			Message msg `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(body, &resp); err != nil || len(resp.Choices) == 0 {
		c.t.Fatalf("chat response %s: %v", body, err)
	}
	return resp.ID, resp.Choices[0].Message.Content
}

func (c client) feedback(id string, rating int, text string) {
	c.t.Helper()
	code, body := c.post("/v1/feedback", map[string]any{"id": id, "rating": rating, "text": text}, nil)
	if code != http.StatusOK {
		c.t.Fatalf("feedback: HTTP %d: %s", code, body)
	}
}

// TestServeJudgeTrainServe runs the whole loop behind the real gateway:
// scripted conversations — an approval, a correction with a written hint,
// thumbs up and down through /v1/feedback — flow through serve → judge →
// train → a new version serving, while the API keeps answering.
func TestServeJudgeTrainServe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	st := openStore(t, dir)
	defer st.Close()
	eng := scripted.New(scripted.Options{})
	gate := rl.NewGate()
	// The side traffic below never pauses for the default quiet time; with
	// none, background work slips into the gaps between its requests.
	gate.Quiet = 0
	gw, err := api.New(api.Config{Engine: rl.GatedEngine{Engine: eng, Gate: gate}, Store: st, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gw.Handler())
	defer srv.Close()

	trainer := &rltest.Trainer{}
	r, err := New(Options{
		Store:   st,
		Judge:   judge.New(&judge.EngineBackend{Engine: eng}, judge.Config{Verdict: judge.VerdictVotes, EvalVotes: 1, Retries: judge.NoRetries, MaxTokens: 512, HintTokens: 256}, quiet()),
		Teacher: &judge.Teacher{Engine: eng}, Trainer: trainer, Publisher: eng, Gate: gate, Log: quiet(),
		Config: Config{Method: rl.MethodCombine, Poll: 20 * time.Millisecond,
			Train: rl.SchedulerConfig{BatchSize: 4, Poll: 20 * time.Millisecond, VersionsDir: filepath.Join(dir, "versions")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	c := client{t: t, url: srv.URL}

	// Background traffic the whole time: serving must never fail.
	var traffic sync.WaitGroup
	trafficCtx, stopTraffic := context.WithCancel(ctx)
	failures := make(chan string, 100)
	traffic.Add(1)
	go func() {
		defer traffic.Done()
		for i := 0; trafficCtx.Err() == nil; i++ {
			b, _ := json.Marshal(map[string]any{"model": "scripted", "messages": []msg{{"user", fmt.Sprintf("ping %d", i)}}})
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat/completions", bytes.NewReader(b))
			req.Header.Set("X-Turn-Type", "side")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				failures <- err.Error()
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				failures <- fmt.Sprintf("HTTP %d", resp.StatusCode)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()

	// An approval: the user's next message says the answer was right.
	q := []msg{{"user", "how far is 3 miles in km?"}}
	_, a := c.chat("approve", q)
	c.chat("approve", append(q, msg{"assistant", a}, msg{"user", `[[say:\boxed{1}]] great, thanks`}))
	// A correction with a hint the judge extracts.
	q = []msg{{"user", "how far is 5 miles?"}}
	_, a = c.chat("correct", q)
	c.chat("correct", append(q, msg{"assistant", a}, msg{"user", hintReply}))
	// Thumbs down and thumbs up through /v1/feedback.
	down, _ := c.chat("down", []msg{{"user", "write a haiku"}})
	c.feedback(down, -1, "too long")
	up, _ := c.chat("up", []msg{{"user", "say hi"}})
	c.feedback(up, 1, "")

	deadline := time.Now().Add(20 * time.Second)
	for eng.Version() < 1 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	stopTraffic()
	traffic.Wait()
	close(failures)
	for f := range failures {
		t.Errorf("serving failed while training: %s", f)
	}
	if eng.Version() != 1 {
		rep, _ := st.Report(ctx)
		t.Fatalf("no version published within 20s: %+v, counters %+v", rep, r.Counters())
	}
	// The next request is served by the new version.
	id, _ := c.chat("after", []msg{{"user", "and now?"}})
	turn, err := st.Turn(ctx, id)
	if err != nil || turn.PolicyVersion != 1 {
		t.Errorf("turn after training: version %d (%v), want 1", turn.PolicyVersion, err)
	}
	if len(trainer.Batches) != 1 || len(trainer.Batches[0]) != 4 {
		t.Fatalf("trainer batches %v", trainer.Batches)
	}
	var rl1, opd, neg int
	for _, s := range trainer.Batches[0] {
		if s.HasOPD() {
			opd++
		}
		if s.UseRL && s.Reward == 1 {
			rl1++
		}
		if s.Reward == -1 {
			neg++
		}
	}
	if rl1 != 3 || opd != 1 || neg != 1 {
		t.Errorf("batch: %d positive, %d with a hint, %d negative; want 3, 1, 1", rl1, opd, neg)
	}
	js, err := st.ListJudgments(ctx, store.TurnFilter{})
	if err != nil || len(js) != 4 {
		t.Errorf("%d judgments (%v), want 4", len(js), err)
	}
	cancel()
	r.Wait()
}
