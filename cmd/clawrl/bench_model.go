package main

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawrl/clawrl/model"
	"github.com/clawrl/clawrl/safetensors"
)

//go:embed bench_model_ref.py
var benchModelRefScript string

//go:embed bench_model_llamacpp.py
var benchModelLlamacppScript string

// benchGreedyIDs is how many greedy token ids each engine reports for the
// side-by-side correctness check.
const benchGreedyIDs = 8

func init() { benchSubcommands = append(benchSubcommands, newBenchModelCmd) }

// benchResult is one engine's measurements; the reference script prints the
// same fields as JSON.
type benchResult struct {
	Engine         string  `json:"engine"`
	PrefillTokS    float64 `json:"prefill_tok_s"`
	DecodeTokS     float64 `json:"decode_tok_s"`
	BatchDecodeTok float64 `json:"batch_decode_tok_s"`
	// PeakRSSMiB is the engine process's peak resident memory (weights,
	// caches, runtime) after its measurements; 0 when not reported.
	PeakRSSMiB float64 `json:"peak_rss_mib,omitempty"`
	// FirstIDs are the first greedy ids after the prompt (the one sampled
	// from the prefill logits, then the decoded ones); empty for engines
	// that don't report them.
	FirstIDs []int32 `json:"first_ids,omitempty"`
	// Skip, set by a reference script instead of results, says why it
	// could not run (a missing module, a missing converter).
	Skip string `json:"skip,omitempty"`
}

func newBenchModelCmd() *cobra.Command {
	var arch, size, dtype, dir, python, llamacppPython, llamacppConvert string
	var promptLen, decodeLen, batch, threads int
	var seed uint64
	var reference bool
	cmd := &cobra.Command{
		Use:   "model",
		Short: "Measure prefill and decode speed, beside transformers on torch CPU",
		Long: `Builds (or loads, with --model) a checkpoint and measures prefill tokens/s
for a --prompt-token prompt, decode tokens/s for one sequence and for --batch
sequences decoded together, and decode as a fraction of the memory-bandwidth
bound (measured read bandwidth ÷ weight bytes read per decode step). With
--reference it runs the same measurements with transformers on torch CPU
(torch.set_num_threads(--threads)) and prints both side by side. With
--llamacpp PYTHON it also converts the checkpoint to GGUF with llama.cpp's
convert_hf_to_gguf.py (--llamacpp-convert) and measures llama.cpp (the
xllamacpp wheel) with --threads threads; it is skipped with a message when
that python lacks xllamacpp. Greedy ids of the first tokens are compared.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			runtime.GOMAXPROCS(threads)
			if dir == "" {
				tmp, err := os.MkdirTemp("", "clawrl-bench-")
				if err != nil {
					return err
				}
				defer os.RemoveAll(tmp)
				cfg, err := model.NewConfig(model.Family(arch), size)
				if err != nil {
					return err
				}
				dt := safetensors.F32
				if dtype == "bf16" {
					dt = safetensors.BF16
				}
				if err := model.WriteRandom(tmp, cfg, seed, dt); err != nil {
					return err
				}
				// llama.cpp's GGUF converter needs the real tokenizer files.
				if err := writeTokenizer(tmp, model.Family(arch), ""); err != nil {
					return err
				}
				dir = tmp
			} else if resolved, _, err := resolveModel(cmd.Context(), dir, os.TempDir(), slog.Default()); err != nil {
				return err
			} else {
				dir = resolved
			}
			if model.IsGGUF(dir) && !cmd.Flags().Changed("dtype") {
				// What serve runs the file on: its quantized blocks.
				d, err := model.DefaultGGUFWeights(dir)
				if err != nil {
					return err
				}
				dtype = d
			}
			m, err := model.LoadWith(dir, model.Options{WeightDType: dtype})
			if err != nil {
				return err
			}
			c := m.Config
			fmt.Fprintf(out, "model %s: hidden %d, %d layers, vocab %d, weights %s (%s); on %s\n",
				c.ModelType, c.HiddenSize, c.NumHiddenLayers, c.VocabSize, dtype, humanBytes(m.WeightBytes()), thisMachine())
			ours, err := benchOurs(m, promptLen, decodeLen, batch, seed)
			if err != nil {
				return err
			}
			bw := measureReadBandwidth(threads)
			perToken := float64(m.DecodeBytesPerStep())
			bound := bw / perToken
			results := []benchResult{ours}
			if reference {
				ref, err := benchReference(python, dir, dtype, promptLen, decodeLen, batch, threads, seed, c.VocabSize)
				if err != nil {
					return fmt.Errorf("reference: %w", err)
				}
				results = append(results, ref)
			}
			if llamacppPython != "" {
				spec := benchSpec(dir, dtype, promptLen, decodeLen, batch, threads, seed, c.VocabSize)
				spec["convert"] = llamacppConvert
				ref, err := runBenchScript(llamacppPython, benchModelLlamacppScript, spec)
				switch {
				case err != nil:
					return fmt.Errorf("llama.cpp reference: %w", err)
				case ref.Skip != "":
					fmt.Fprintf(out, "llama.cpp skipped: %s\n", ref.Skip)
				default:
					results = append(results, ref)
				}
			}
			writeBenchTable(out, promptLen, batch, bound, results)
			fmt.Fprintf(out, "read bandwidth %.1f GB/s, %s read per decode step → bound %.1f tok/s\n", bw/1e9, humanBytes(int64(perToken)), bound)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&arch, "arch", "qwen3", "architecture of the random model: qwen3, qwen2 or llama")
	f.StringVar(&size, "size", model.SizeTiny, "size of the random model: tiny or 0.6b")
	f.StringVar(&dtype, "dtype", "f32", "weights in memory: f32 or bf16; for a GGUF file quant (its blocks with llama.cpp's 8-bit activations), quant-f32 (its blocks with float32 activations) or f32; the default for a GGUF file is what serve runs it on (quant-f32 where every block type has a float32-activation kernel, as in the demo model, else quant)")
	f.StringVar(&dir, "model", "", "benchmark this model instead of a random one: "+modelFlagHelp)
	f.IntVar(&promptLen, "prompt", 128, "prompt tokens for prefill")
	f.IntVar(&decodeLen, "decode", 32, "tokens to decode")
	f.IntVar(&batch, "batch", 4, "sequences decoded together in the batched measurement")
	f.IntVar(&threads, "threads", runtime.NumCPU(), "threads (GOMAXPROCS here, torch.set_num_threads in the reference)")
	f.Uint64Var(&seed, "seed", 1, "seed for the random model and prompt")
	f.BoolVar(&reference, "reference", false, "also run transformers on torch CPU and print ratios")
	f.StringVar(&python, "python", envOr("CLAWRL_PYTHON", "python3"), "python with torch and transformers for --reference")
	f.StringVar(&llamacppPython, "llamacpp", "", "also run llama.cpp with this python (xllamacpp installed, and torch/transformers for the GGUF converter) and print ratios")
	f.StringVar(&llamacppConvert, "llamacpp-convert", os.Getenv("CLAWRL_LLAMACPP_CONVERT"), "llama.cpp's convert_hf_to_gguf.py, for --llamacpp")
	return cmd
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func benchPrompt(seed uint64, n, vocab int) []int32 {
	r := rand.New(rand.NewPCG(seed, 99))
	ids := make([]int32, n)
	for i := range ids {
		ids[i] = int32(r.IntN(min(vocab, 100000)))
	}
	return ids
}

func benchOurs(m *model.Model, promptLen, decodeLen, batch int, seed uint64) (benchResult, error) {
	ctx := context.Background()
	V := m.Config.VocabSize
	res := benchResult{Engine: "clawrl"}
	record := func(id int32) {
		if len(res.FirstIDs) < benchGreedyIDs {
			res.FirstIDs = append(res.FirstIDs, id)
		}
	}
	prompt := benchPrompt(seed, promptLen, V)
	// Warm up once (page in the weights), then time.
	if _, err := m.Prefill(ctx, m.NewSequence(), prompt[:min(8, len(prompt))], nil); err != nil {
		return res, err
	}
	seq := m.NewSequence()
	start := time.Now()
	logits, err := m.Prefill(ctx, seq, prompt, nil)
	if err != nil {
		return res, err
	}
	res.PrefillTokS = float64(promptLen) / time.Since(start).Seconds()
	decode := func(seqs []*model.Sequence, next []int32, record func(int32)) (float64, error) {
		start := time.Now()
		for range decodeLen {
			all, err := m.DecodeStep(seqs, next, nil)
			if err != nil {
				return 0, err
			}
			for i, l := range all {
				id, _ := model.Sample(l, model.SamplingParams{}, nil)
				next[i] = id
				if record != nil {
					record(id)
				}
			}
		}
		return float64(decodeLen*len(seqs)) / time.Since(start).Seconds(), nil
	}
	id, _ := model.Sample(logits, model.SamplingParams{}, nil)
	record(id)
	if res.DecodeTokS, err = decode([]*model.Sequence{seq}, []int32{id}, record); err != nil {
		return res, err
	}
	seqs := make([]*model.Sequence, batch)
	next := make([]int32, batch)
	for i := range seqs {
		seqs[i] = m.NewSequence()
		logits, err := m.Prefill(ctx, seqs[i], benchPrompt(seed+uint64(i)+1, promptLen, V), nil)
		if err != nil {
			return res, err
		}
		next[i], _ = model.Sample(logits, model.SamplingParams{}, nil)
	}
	res.BatchDecodeTok, err = decode(seqs, next, nil)
	res.PeakRSSMiB = peakRSSMiB()
	return res, err
}

// measureReadBandwidth sums a 512 MiB buffer with one goroutine per thread
// and returns the best of three passes in bytes/s.
func measureReadBandwidth(threads int) float64 {
	buf := make([]float32, 128<<20)
	for i := range buf {
		buf[i] = float32(i & 7)
	}
	best := 0.0
	for range 3 {
		start := time.Now()
		var wg sync.WaitGroup
		per := len(buf) / threads
		sums := make([]float32, threads)
		for t := range threads {
			wg.Add(1)
			go func() {
				defer wg.Done()
				part := buf[t*per : (t+1)*per]
				var s0, s1, s2, s3 float32
				for i := 0; i+4 <= len(part); i += 4 {
					s0 += part[i]
					s1 += part[i+1]
					s2 += part[i+2]
					s3 += part[i+3]
				}
				sums[t] = s0 + s1 + s2 + s3
			}()
		}
		wg.Wait()
		best = max(best, float64(4*len(buf))/time.Since(start).Seconds())
	}
	return best
}

// writeBenchTable prints one row per engine and, for each reference after
// the first (ours), the ratio ours ÷ reference and whether the greedy ids
// agree.
func writeBenchTable(out io.Writer, promptLen, batch int, bound float64, results []benchResult) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "engine\tprefill %d tok/s\tdecode tok/s\tdecode×%d tok/s\tdecode ÷ bound\tpeak RSS MiB\t\n", promptLen, batch)
	rss := func(v float64) string {
		if v == 0 {
			return "-"
		}
		return fmt.Sprintf("%.0f", v)
	}
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.1f\t%.0f%%\t%s\t\n", r.Engine, r.PrefillTokS, r.DecodeTokS, r.BatchDecodeTok, 100*r.DecodeTokS/bound, rss(r.PeakRSSMiB))
	}
	for _, b := range results[min(1, len(results)):] {
		a := results[0]
		mem := ""
		if a.PeakRSSMiB > 0 && b.PeakRSSMiB > 0 {
			mem = fmt.Sprintf("%.2fx", a.PeakRSSMiB/b.PeakRSSMiB)
		}
		fmt.Fprintf(tw, "%s ÷ %s\t%.2fx\t%.2fx\t%.2fx\t\t%s\t\n", shortEngine(a.Engine), shortEngine(b.Engine),
			a.PrefillTokS/b.PrefillTokS, a.DecodeTokS/b.DecodeTokS, a.BatchDecodeTok/b.BatchDecodeTok, mem)
	}
	tw.Flush()
	for _, b := range results[min(1, len(results)):] {
		a := results[0]
		if len(a.FirstIDs) == 0 || len(b.FirstIDs) == 0 {
			continue
		}
		n := min(len(a.FirstIDs), len(b.FirstIDs))
		same := 0
		for same < n && a.FirstIDs[same] == b.FirstIDs[same] {
			same++
		}
		fmt.Fprintf(out, "greedy ids, %s vs %s: first %d of %d agree (%v vs %v)\n",
			shortEngine(a.Engine), shortEngine(b.Engine), same, n, a.FirstIDs[:n], b.FirstIDs[:n])
	}
}

// shortEngine is the engine's name without its version, for ratio labels.
func shortEngine(name string) string {
	if i := strings.IndexByte(name, ' '); i > 0 {
		return name[:i]
	}
	return name
}

// benchSpec is the JSON spec the reference scripts read on stdin: the same
// prompts benchOurs uses, the first for prefill and single decode, the
// others decoded together.
func benchSpec(dir, dtype string, promptLen, decodeLen, batch, threads int, seed uint64, vocab int) map[string]any {
	prompts := [][]int32{benchPrompt(seed, promptLen, vocab)}
	for i := range batch {
		prompts = append(prompts, benchPrompt(seed+uint64(i)+1, promptLen, vocab))
	}
	return map[string]any{"model": dir, "dtype": dtype, "threads": threads, "decode": decodeLen, "prompts": prompts}
}

func benchReference(python, dir, dtype string, promptLen, decodeLen, batch, threads int, seed uint64, vocab int) (benchResult, error) {
	r, err := runBenchScript(python, benchModelRefScript, benchSpec(dir, dtype, promptLen, decodeLen, batch, threads, seed, vocab))
	if err == nil && r.Skip != "" {
		err = errors.New(r.Skip)
	}
	return r, err
}

// runBenchScript runs a reference script with `python -c`, the spec as JSON
// on stdin, and reads its one JSON result from stdout. On failure the error
// carries the tail of the script's stderr (llama.cpp logs there).
func runBenchScript(python, script string, spec map[string]any) (benchResult, error) {
	in, err := json.Marshal(spec)
	if err != nil {
		return benchResult{}, err
	}
	cmd := exec.Command(python, "-c", script)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	outb, err := cmd.Output()
	if err != nil {
		tail := stderr.Bytes()
		tail = tail[max(0, len(tail)-2000):]
		return benchResult{}, fmt.Errorf("%s: %w\n%s", python, err, tail)
	}
	return parseBenchResult(outb)
}

// parseBenchResult reads a reference script's output: one JSON object with
// either results or a skip reason.
func parseBenchResult(outb []byte) (benchResult, error) {
	var r benchResult
	if err := json.Unmarshal(bytes.TrimSpace(outb), &r); err != nil {
		return r, fmt.Errorf("reading the reference's output %q: %w", outb, err)
	}
	if r.Skip == "" && (r.Engine == "" || r.DecodeTokS <= 0) {
		return r, fmt.Errorf("reference output %q has no engine or decode speed", outb)
	}
	return r, nil
}
