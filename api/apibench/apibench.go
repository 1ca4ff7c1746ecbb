// Package apibench measures what the gateway adds on top of the engine: the
// scripted engine answers instantly, so the time a request takes through the
// gateway (HTTP, decoding, session lookup, rendering, streaming, recording
// the turn in the store) minus the time of the same generation called
// in-process is the gateway's overhead. `clawrl bench gateway` prints it.
package apibench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/clawrl/clawrl/api"
	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/engine/scripted"
	"github.com/clawrl/clawrl/store/sqlite"
)

// Options configure a run.
type Options struct {
	Clients  int           // concurrent clients in the throughput phase (default 64)
	Duration time.Duration // per measurement (default 5s)
	DataDir  string        // where the store goes (default a temporary directory)
	// Synchronous is the store's synchronous pragma (default the store's).
	Synchronous string
}

// Result is one measurement.
type Result struct {
	Name     string
	Clients  int
	Requests int
	Errors   int
	Elapsed  time.Duration
	P50, P99 time.Duration
	// CPU is the process's CPU time (user + system) during the run: the
	// gateway and the load generator together. Unlike requests/s it hardly
	// moves with other processes' load on a shared machine.
	CPU time.Duration
}

// CPUPerRequest is the process's CPU time per completed request.
func (r Result) CPUPerRequest() time.Duration {
	if r.Requests == 0 {
		return 0
	}
	return r.CPU / time.Duration(r.Requests)
}

// RPS is requests per second.
func (r Result) RPS() float64 { return float64(r.Requests) / r.Elapsed.Seconds() }

// measure runs op from n clients for d and collects latencies.
func measure(ctx context.Context, name string, n int, d time.Duration, op func(ctx context.Context, client, i int) error) Result {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var mu sync.Mutex
	var all []time.Duration
	var errs atomic.Int64
	var wg sync.WaitGroup
	cpu0 := processCPU()
	start := time.Now()
	for c := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lat := make([]time.Duration, 0, 4096)
			for i := 0; ctx.Err() == nil; i++ {
				t0 := time.Now()
				if err := op(context.WithoutCancel(ctx), c, i); err != nil {
					errs.Add(1)
					continue
				}
				lat = append(lat, time.Since(t0))
			}
			mu.Lock()
			all = append(all, lat...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	r := Result{Name: name, Clients: n, Requests: len(all), Errors: int(errs.Load()), Elapsed: time.Since(start), CPU: processCPU() - cpu0}
	if len(all) > 0 {
		slices.Sort(all)
		r.P50 = all[len(all)*50/100]
		r.P99 = all[min(len(all)-1, len(all)*99/100)]
	}
	return r
}

// userText is what client c sends on request i: distinct per client so
// sessions never share content.
func userText(c, i int) string { return fmt.Sprintf("client %d says hello number %d", c, i) }

// Run measures the engine in-process and the gateway (non-streaming and
// streaming), unloaded (1 client) and loaded (opts.Clients), and prints the
// comparison to w.
func Run(ctx context.Context, opts Options, w io.Writer) error {
	if opts.Clients <= 0 {
		opts.Clients = 64
	}
	if opts.Duration <= 0 {
		opts.Duration = 5 * time.Second
	}
	if opts.DataDir == "" {
		dir, err := os.MkdirTemp("", "clawrl-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		opts.DataDir = dir
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	eng := scripted.New(scripted.Options{})
	st, err := sqlite.Open(ctx, filepath.Join(opts.DataDir, sqlite.FileName), sqlite.Options{Logger: quiet, Synchronous: opts.Synchronous})
	if err != nil {
		return err
	}
	defer st.Close()
	gw, err := api.New(api.Config{Engine: eng, Store: st, Logger: quiet})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := gw.HTTPServer(ln.Addr().String())
	go srv.Serve(ln)
	defer srv.Close()
	url := "http://" + ln.Addr().String() + "/v1/chat/completions"
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: opts.Clients + 1, DisableCompression: true}}

	f := eng.Format()
	engineOp := func(ctx context.Context, c, i int) error {
		// What the gateway asks of the engine for the same request.
		text, err := f.Render([]chat.Message{{Role: chat.RoleUser, Content: userText(c, i)}}, nil, engine.RenderOptions{AddGenerationPrompt: true})
		if err != nil {
			return err
		}
		_, err = eng.Generate(ctx, engine.GenerateRequest{PromptIDs: f.Encode(text), MaxTokens: 4096}, func(engine.Token) error { return nil })
		return err
	}
	gatewayOp := func(stream bool) func(ctx context.Context, c, i int) error {
		return func(ctx context.Context, c, i int) error {
			body := fmt.Sprintf(`{"model":"scripted","stream":%v,"messages":[{"role":"user","content":%q}]}`, stream, userText(c, i))
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader([]byte(body)))
			if err != nil {
				return err
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Session-Id", fmt.Sprintf("bench-%d", c))
			resp, err := client.Do(req)
			if err != nil {
				return err
			}
			data, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				return err
			}
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("status %d: %s", resp.StatusCode, data)
			}
			if stream && !bytes.HasSuffix(data, []byte("data: [DONE]\n\n")) {
				return fmt.Errorf("stream without [DONE]")
			}
			return nil
		}
	}

	fmt.Fprintf(w, "gateway overhead: scripted engine answering instantly, store %s, %v per measurement\n\n", st.Path(), opts.Duration)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "clients\tmode\tengine req/s\tgateway req/s\tratio\tengine p50\tgateway p50\tadded p50\tengine p99\tgateway p99\tadded p99\tengine CPU/req\tgateway CPU/req\twrites/commit\terrors\t")
	for _, clients := range []int{1, opts.Clients} {
		ref := measure(ctx, "engine", clients, opts.Duration, engineOp)
		for _, stream := range []bool{false, true} {
			mode := "non-streaming"
			if stream {
				mode = "streaming"
			}
			commits0, writes0 := st.GroupCommits()
			g := measure(ctx, mode, clients, opts.Duration, gatewayOp(stream))
			commits1, writes1 := st.GroupCommits()
			fmt.Fprintf(tw, "%d\t%s\t%.0f\t%.0f\t%.3f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f\t%d\t\n", clients, mode,
				ref.RPS(), g.RPS(), g.RPS()/ref.RPS(), ms(ref.P50), ms(g.P50), ms(g.P50-ref.P50),
				ms(ref.P99), ms(g.P99), ms(g.P99-ref.P99), us(ref.CPUPerRequest()), us(g.CPUPerRequest()), float64(writes1-writes0)/float64(max(1, commits1-commits0)), g.Errors)
		}
	}
	tw.Flush()
	fmt.Fprintln(w, "\nratio = gateway req/s ÷ engine req/s; added = gateway latency − engine latency at the same percentile;\nCPU/req = the process's CPU time per request, load generator included (steadier than req/s on a shared machine);\nwrites/commit = store writes (session touches, turns, observations) per group commit.")
	fmt.Fprintln(w, "The load generator runs in the same process and shares the CPUs with the gateway.")
	return nil
}

func us(d time.Duration) string { return fmt.Sprintf("%dµs", d.Microseconds()) }

func ms(d time.Duration) string { return fmt.Sprintf("%.3fms", float64(d.Microseconds())/1000) }
