package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine/native"
	"github.com/clawrl/clawrl/engine/vllm/vllmtest"
	"github.com/clawrl/clawrl/store/postgres/pgtest"
)

// The scale-out measurements of BENCHMARKS.md. They print numbers and never
// fail on a clock; they run only when asked (CLAWRL_BENCH_SCALE=1), since
// they take minutes and mean little on a loaded machine.

type loadResult struct {
	requests, errors int
	elapsed          time.Duration
	p50, p99         time.Duration
}

func (r loadResult) String() string {
	return fmt.Sprintf("%6d req  %7.1f req/s  p50 %7.2f ms  p99 %7.2f ms  errors %d", r.requests,
		float64(r.requests)/r.elapsed.Seconds(), msOf(r.p50), msOf(r.p99), r.errors)
}

func msOf(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// drive runs clients that each send do(client, i) for d and collects latencies.
func drive(clients int, d time.Duration, do func(client, i int) error) loadResult {
	var mu sync.Mutex
	var lat []time.Duration
	errs := 0
	start := time.Now()
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Since(start) < d; i++ {
				t0 := time.Now()
				err := do(c, i)
				el := time.Since(t0)
				mu.Lock()
				if err != nil {
					errs++
				} else {
					lat = append(lat, el)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	r := loadResult{requests: len(lat), errors: errs, elapsed: time.Since(start)}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	if len(lat) > 0 {
		r.p50, r.p99 = lat[len(lat)/2], lat[min(len(lat)-1, len(lat)*99/100)]
	}
	return r
}

func benchScale(t *testing.T) {
	t.Helper()
	if os.Getenv("CLAWRL_BENCH_SCALE") != "1" {
		t.Skip("a measurement: set CLAWRL_BENCH_SCALE=1")
	}
}

// TestBenchGatewaysOnPostgres: requests/s and latency of one gateway and of
// two gateways on one Postgres (the deterministic test engine, so the
// gateway and the store are what is measured), beside one gateway on SQLite.
// Clients hold 4-turn sessions; with two gateways a session's turns
// alternate between them.
func TestBenchGatewaysOnPostgres(t *testing.T) {
	benchScale(t)
	srv := pgtest.New(t)
	exe := buildClawrl(t)
	const clients, d = 32, 10 * time.Second
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	run := func(addrs []string) loadResult {
		return drive(clients, d, func(c, i int) error {
			turn := i % 4
			var msgs []any
			for k := 0; k <= turn; k++ {
				msgs = append(msgs, map[string]any{"role": "user", "content": fmt.Sprintf("client %d session %d turn %d", c, i/4, k)})
				if k < turn {
					msgs = append(msgs, map[string]any{"role": "assistant", "content": "ok"})
				}
			}
			_, err := completeOnce(context.Background(), client, addrs[(c+i)%len(addrs)],
				map[string]any{"messages": msgs, "max_tokens": 16}, fmt.Sprintf("b-%d-%d", c, i/4))
			return err
		})
	}
	sqliteGW := startServeWith(t, exe, t.TempDir(), "scripted", time.Minute, "--method", "off")
	rSQLite := run([]string{sqliteGW.addr})
	sqliteGW.cmd.Process.Kill()
	url1 := srv.Database(t, "bench1")
	one := startServeWith(t, exe, t.TempDir(), "scripted", time.Minute, "--store", url1, "--no-learn")
	rOne := run([]string{one.addr})
	one.cmd.Process.Kill()
	url2 := srv.Database(t, "bench2")
	a := startServeWith(t, exe, t.TempDir(), "scripted", time.Minute, "--store", url2, "--no-learn")
	b := startServeWith(t, exe, t.TempDir(), "scripted", time.Minute, "--store", url2, "--no-learn")
	rTwo := run([]string{a.addr, b.addr})
	t.Logf("%d clients, %v each, scripted engine, max_tokens 16, 4-turn sessions", clients, d)
	t.Logf("1 gateway, SQLite:       %v", rSQLite)
	t.Logf("1 gateway, Postgres:     %v", rOne)
	t.Logf("2 gateways, Postgres:    %v", rTwo)
	t.Logf("2 vs 1 gateways on Postgres: %.2f× requests/s", (float64(rTwo.requests)/rTwo.elapsed.Seconds())/(float64(rOne.requests)/rOne.elapsed.Seconds()))
}

// TestBenchGatewayOnVLLM: latency added by clawrl in front of vLLM, for the
// same prompt ids and the same greedy 16 tokens: direct /v1/completions
// versus clawrl's /v1/chat/completions (render, tokenise, stream from vLLM,
// parse, record), one client and four.
func TestBenchGatewayOnVLLM(t *testing.T) {
	benchScale(t)
	python := vllmtest.Python(t)
	ckpt := filepath.Join(t.TempDir(), "ckpt")
	vllmtest.WriteCheckpoint(t, ckpt)
	v := vllmtest.Start(t, python, ckpt)
	exe := buildClawrl(t)
	p := startServeWith(t, exe, t.TempDir(), "", 2*time.Minute, "--engine", "vllm:"+v.URL, "--model", ckpt, "--method", "off")
	eng, err := native.Open(ckpt, native.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := eng.Format()
	question := "Tell me about the weather in Zürich today."
	msgs := []any{map[string]any{"role": "user", "content": question}}
	var model string
	{
		resp, err := http.Get(v.URL + "/v1/models")
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Data []struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		json.NewDecoder(resp.Body).Decode(&m) //nolint:errcheck
		resp.Body.Close()
		model = m.Data[0].ID
	}
	// The prompt ids clawrl sends for msgs: the checkpoint's own template.
	rendered, err := f.Render([]chat.Message{{Role: chat.RoleUser, Content: question}}, nil, chat.RenderOptions{AddGenerationPrompt: true})
	if err != nil {
		t.Fatal(err)
	}
	prompt := f.Encode(rendered)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	direct := func(int, int) error {
		raw, _ := json.Marshal(map[string]any{"model": model, "prompt": prompt, "max_tokens": 16, "temperature": 0,
			"logprobs": 1, "return_token_ids": true, "stream": true})
		resp, err := client.Post(v.URL+"/v1/completions", "application/json", bytes.NewReader(raw))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		_, err = b.ReadFrom(resp.Body)
		return err
	}
	gateway := func(c, i int) error {
		_, err := completeOnce(context.Background(), client, p.addr, map[string]any{"messages": msgs, "max_tokens": 16,
			"temperature": 0, "stream": true}, fmt.Sprintf("g-%d-%d", c, i))
		return err
	}
	// The first requests compile vLLM's CPU kernels: not part of either side.
	if err := direct(0, -1); err != nil {
		t.Fatal(err)
	}
	if err := gateway(0, -1); err != nil {
		t.Fatal(err)
	}
	// Latency: each client alternates direct and gateway requests, so both
	// sides see the same load on a shared machine; requests/s: windows of
	// one side only, alternated twice so a drift in load hits both.
	for _, clients := range []int{1, 4} {
		d, g := drivePair(clients, 30*time.Second, direct, gateway)
		t.Logf("%d client(s) interleaved, direct vLLM:   %v", clients, d)
		t.Logf("%d client(s) interleaved, through clawrl: %v", clients, g)
		t.Logf("%d client(s) added latency p50 %.2f ms, p99 %.2f ms", clients, msOf(g.p50-d.p50), msOf(g.p99-d.p99))
		var dn, gn int
		var de, ge time.Duration
		for range 2 {
			r := drive(clients, 10*time.Second, direct)
			dn, de = dn+r.requests, de+r.elapsed
			r = drive(clients, 10*time.Second, gateway)
			gn, ge = gn+r.requests, ge+r.elapsed
		}
		t.Logf("%d client(s) requests/s: direct %.2f, through clawrl %.2f, ratio %.2f", clients,
			float64(dn)/de.Seconds(), float64(gn)/ge.Seconds(), (float64(gn)/ge.Seconds())/(float64(dn)/de.Seconds()))
	}
}

// drivePair runs clients that alternate a and b for d and collects each
// side's latencies apart.
func drivePair(clients int, d time.Duration, a, b func(client, i int) error) (loadResult, loadResult) {
	var mu sync.Mutex
	lat := [2][]time.Duration{}
	errs := [2]int{}
	start := time.Now()
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Since(start) < d; i++ {
				side, do := (i+c)%2, a
				if side == 1 {
					do = b
				}
				t0 := time.Now()
				err := do(c, i)
				el := time.Since(t0)
				mu.Lock()
				if err != nil {
					errs[side]++
				} else {
					lat[side] = append(lat[side], el)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	var out [2]loadResult
	for side := range 2 {
		l := lat[side]
		sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
		out[side] = loadResult{requests: len(l), errors: errs[side], elapsed: elapsed}
		if len(l) > 0 {
			out[side].p50, out[side].p99 = l[len(l)/2], l[min(len(l)-1, len(l)*99/100)]
		}
	}
	return out[0], out[1]
}
