package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"

	"github.com/clawrl/clawrl/api"
	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/engine/native"
	"github.com/clawrl/clawrl/engine/scripted"
	"github.com/clawrl/clawrl/loop"
	"github.com/clawrl/clawrl/model"
	"github.com/clawrl/clawrl/rl"
	"github.com/clawrl/clawrl/safetensors"
)

func init() { subcommands = append(subcommands, newServeCmd) }

// testEngineEnv selects the deterministic test engine instead of a model.
// It exists for the process-level tests (kill -9 during load) and is not a
// user-facing mode: it is not a flag and not in the help.
const testEngineEnv = "CLAWRL_TEST_ENGINE"

type serveOptions struct {
	weights     string // model.Options.WeightDType (--weights)
	model       string
	addr        string
	data        string
	method      string
	apiKey      string
	sessionIdle time.Duration
	maxBody     int64
	maxTokens   int
	logLevel    string
	learning    loop.Settings // the learning loop's flags (serve_loop.go)
	storeURL    string        // --store (store_open.go)
	noLearn     bool          // --no-learn: a gateway only (follow.go)
	engineURL   string        // --engine (engine_open.go)
	// teacherServe is --teacher-serve: a second server of this model
	// writes the loop's teacher answers (serve_teacher.go).
	teacherServe string
	// teacherAuto is set where teacherServe came from --teacher-serve
	// auto: a teacher that fails to start is then done without, at the
	// --distill-focus focusAlone the server has without it; teacherWhy is
	// what auto decided, for the log.
	teacherAuto bool
	focusAlone  float64
	teacherWhy  string
}

func newServeCmd() *cobra.Command {
	var o serveOptions
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the model behind an OpenAI-compatible API, record every turn, and learn from what follows",
		Long: `Serve the model at --model behind an OpenAI-compatible API
(POST /v1/chat/completions, GET /v1/models, POST /v1/feedback, GET /healthz,
GET /metrics), recording every conversation in the store under --data, with
the dashboard and browser chat at http://ADDR/ (behind the same key).

The server binds 127.0.0.1 by default. Binding any other address needs an
API key (--api-key or CLAWRL_API_KEY), which clients then send as
"Authorization: Bearer <key>".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.apiKey == "" {
				o.apiKey = os.Getenv("CLAWRL_API_KEY")
			}
			o.teacherWhy = teacherServeDefaults(cmd.Flags(), &o)
			return runServe(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.model, "model", "", modelFlagHelp)
	f.StringVar(&o.addr, "addr", "127.0.0.1:30000", "listen address; anything but loopback needs --api-key")
	addDataFlag(cmd, &o.data)
	f.StringVar(&o.method, "method", "combine", "training signal: combine, rl, opd or off")
	f.StringVar(&o.apiKey, "api-key", "", "require this Bearer key on every request but /healthz (default $CLAWRL_API_KEY)")
	f.DurationVar(&o.sessionIdle, "session-idle", 30*time.Minute, "a session idle this long has its last turn expired (no next state will come)")
	f.Int64Var(&o.maxBody, "max-body", 32<<20, "largest request body in bytes (413 beyond)")
	f.IntVar(&o.maxTokens, "max-tokens", 4096, "completion limit for requests that set none")
	f.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error")
	f.StringVar(&o.weights, "weights", "", "how weights are kept: \"\" (the model's own: f32, or bf16 where stored so; a GGUF file's blocks: with float32 activations where this CPU has kernels for all its types, as for the demo model, else with Q8 activations as llama.cpp, e.g. Q4_K_M; f32 only without AVX2), quant-f32 (a GGUF file's quantized blocks, float32 activations: float32's answers), quant (the blocks with llama.cpp's Q8 activations: llama.cpp's answers) or f32 (dequantized)")
	o.learning.AddFlags(f)
	f.StringVar(&o.teacherServe, "teacher-serve", teacherServeAuto, teacherServeHelp)
	addScaleFlags(f, &o)
	return cmd
}

// openEngine returns the engine serve runs. Adding an engine is one case
// here.
func openEngine(o serveOptions, log *slog.Logger) (engine.Engine, error) {
	if os.Getenv(testEngineEnv) == "scripted" {
		log.Warn("serving the deterministic test engine (" + testEngineEnv + "=scripted): not a model")
		return scripted.New(scripted.Options{}), nil
	}
	if o.engineURL != "" {
		if eng, err := openRemoteEngine(o, log); eng != nil || err != nil {
			return eng, err
		}
	}
	dir, id, err := trainedModel(o, log)
	if err != nil {
		return nil, err
	}
	return native.Open(dir, native.Options{ModelID: id, WeightDType: o.weights})
}

// defaultModel returns the random tiny checkpoint under data (--model
// random:tiny), writing it on first use: a random tiny Qwen3 with the real
// Qwen3 tokenizer. It talks nonsense, loads in a moment and is the same on
// every machine, which is what tests need.
func defaultModel(data string, log *slog.Logger) (string, error) {
	dir := filepath.Join(data, "models", "tiny-qwen3")
	if _, err := os.Stat(filepath.Join(dir, "config.json")); err == nil {
		return dir, nil
	}
	log.Warn("serving a random tiny Qwen3 (--model random:tiny; it talks nonsense)", "dir", dir)
	tmp := dir + ".partial"
	if err := os.RemoveAll(tmp); err != nil {
		return "", err
	}
	cfg, err := model.NewConfig(model.Qwen3, model.SizeTiny)
	if err != nil {
		return "", err
	}
	if err := model.WriteRandom(tmp, cfg, 0, safetensors.F32); err != nil {
		return "", fmt.Errorf("default model: %w", err)
	}
	if err := writeTokenizer(tmp, model.Qwen3, ""); err != nil {
		return "", fmt.Errorf("default model: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return "", fmt.Errorf("default model: %w", err)
	}
	return dir, nil
}

func runServe(ctx context.Context, o serveOptions) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		return fmt.Errorf("--log-level %q: %w", o.logLevel, err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	switch o.method {
	case "combine", "rl", "opd", "off":
	default:
		return fmt.Errorf("--method %q: want combine, rl, opd or off", o.method)
	}
	if o.sessionIdle <= 0 {
		return fmt.Errorf("--session-idle %v: want a positive duration", o.sessionIdle)
	}
	if o.maxTokens < 0 {
		return fmt.Errorf("--max-tokens %d: want a positive number of tokens", o.maxTokens)
	}
	if err := api.CheckAddr(o.addr, o.apiKey); err != nil {
		return err
	}
	if err := checkTeacherServe(o); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	stopTeacher, err := startServeTeacher(ctx, &o, log)
	if err != nil {
		return err
	}
	defer stopTeacher()

	eng, err := openEngine(o, log)
	if err != nil {
		return err
	}
	st, err := openStore(ctx, o.storeURL, o.data, log)
	if err != nil {
		return err
	}
	defer st.Close()
	// The gateway serves through the gate, so background training and
	// judging yield to requests being generated.
	gate := rl.NewGate()
	registry := prometheus.NewRegistry()
	dashboard, err := newDashboard(o, eng, st, log)
	if err != nil {
		return err
	}
	gw, err := api.New(api.Config{Engine: rl.GatedEngine{Engine: eng, Gate: gate}, Store: st, Logger: log, APIKey: o.apiKey,
		MaxBodyBytes: o.maxBody, DefaultMaxTokens: o.maxTokens, Registry: registry, UI: dashboard})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", o.addr, err)
	}
	srv := gw.HTTPServer(o.addr)

	loops, stopLoops := context.WithCancel(context.Background())
	defer stopLoops()
	go gw.Tracker().Expire(loops, o.sessionIdle, min(max(o.sessionIdle/10, time.Second), time.Minute))
	var learning interface{ Wait() }
	if o.noLearn {
		learning, err = startFollowing(loops, st, eng, 2*time.Second, log)
	} else {
		learning, err = startLearning(loops, o, eng, st, gate, registry, log)
	}
	if err != nil {
		return err
	}

	info := eng.Info()
	m := thisMachine()
	log.Info("listening", "addr", ln.Addr().String(), "dashboard", "http://"+ln.Addr().String()+"/", "model", info.ID, "engine", info.Engine,
		"data", o.data, "method", o.method, "auth", o.apiKey != "", "go_memory_limit_gib", memoryLimitGiB(),
		"cpu", m.CPU, "kernels", m.Kernels())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve %s: %w", o.addr, err)
	case <-ctx.Done():
	}
	log.Info("shutting down: finishing requests in flight")
	shutdown, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Warn("shutdown", "err", err)
	}
	stopLoops()
	learning.Wait()
	return nil
}

// memoryLimitGiB is the Go runtime's soft memory limit in GiB (memlimit.Set
// or GOMEMLIMIT), or 0 when there is none.
func memoryLimitGiB() float64 {
	n := debug.SetMemoryLimit(-1)
	if n == math.MaxInt64 {
		return 0
	}
	return math.Round(float64(n)/(1<<30)*10) / 10
}
