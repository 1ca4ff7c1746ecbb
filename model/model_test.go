package model

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/clawrl/clawrl/safetensors"
)

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name  string
		json  string
		check func(t *testing.T, c *Config)
		err   string
	}{
		{name: "qwen3 release", json: `{"architectures":["Qwen3ForCausalLM"],"model_type":"qwen3","hidden_size":1024,"intermediate_size":3072,
			"num_hidden_layers":28,"num_attention_heads":16,"num_key_value_heads":8,"head_dim":128,"rms_norm_eps":1e-06,"rope_scaling":null,
			"rope_theta":1000000,"tie_word_embeddings":true,"torch_dtype":"bfloat16","vocab_size":151936,"eos_token_id":151645,"max_position_embeddings":40960}`,
			check: func(t *testing.T, c *Config) {
				if c.RopeTheta != 1e6 || !c.TieWordEmbeddings || c.TorchDtype != "bfloat16" || c.EOSTokenIDs[0] != 151645 || !c.QKNorm() || c.KVDim() != 1024 {
					t.Errorf("parsed %+v", c)
				}
			}},
		{name: "transformers 5 rope_parameters and dtype", json: `{"model_type":"llama","hidden_size":64,"intermediate_size":128,"num_hidden_layers":1,
			"num_attention_heads":4,"vocab_size":10,"dtype":"float32","eos_token_id":[1,2],
			"rope_parameters":{"rope_type":"llama3","rope_theta":500000.0,"factor":8.0,"low_freq_factor":1.0,"high_freq_factor":4.0,"original_max_position_embeddings":8192}}`,
			check: func(t *testing.T, c *Config) {
				if c.RopeTheta != 500000 || c.RopeScaling.Type != "llama3" || c.TorchDtype != "float32" || len(c.EOSTokenIDs) != 2 {
					t.Errorf("parsed %+v rope %+v", c, c.RopeScaling)
				}
				if c.HeadDim != 16 || c.NumKeyValueHeads != 4 || c.RMSNormEps != 1e-6 {
					t.Errorf("defaults not filled: head_dim %d kv %d eps %v", c.HeadDim, c.NumKeyValueHeads, c.RMSNormEps)
				}
			}},
		{name: "legacy rope type key", json: `{"model_type":"llama","hidden_size":64,"intermediate_size":128,"num_hidden_layers":1,"num_attention_heads":4,"vocab_size":10,
			"rope_scaling":{"type":"linear","factor":2.0}}`,
			check: func(t *testing.T, c *Config) {
				if c.RopeScaling.Type != "linear" {
					t.Errorf("rope type %q", c.RopeScaling.Type)
				}
			}},
		{name: "qwen2 implies qkv bias", json: `{"architectures":["Qwen2ForCausalLM"],"hidden_size":64,"intermediate_size":128,"num_hidden_layers":1,"num_attention_heads":4,"vocab_size":10}`,
			check: func(t *testing.T, c *Config) {
				if c.ModelType != Qwen2 || !c.AttentionBias {
					t.Errorf("model_type %q attention_bias %v", c.ModelType, c.AttentionBias)
				}
			}},
		{name: "unsupported family", json: `{"model_type":"gpt2","hidden_size":64}`, err: `model_type "gpt2"`},
		{name: "gqa mismatch", json: `{"model_type":"llama","hidden_size":64,"intermediate_size":128,"num_hidden_layers":1,"num_attention_heads":4,"num_key_value_heads":3,"vocab_size":10}`, err: "not a multiple"},
		{name: "yarn", json: `{"model_type":"llama","hidden_size":64,"intermediate_size":128,"num_hidden_layers":1,"num_attention_heads":4,"vocab_size":10,"rope_scaling":{"rope_type":"yarn","factor":4}}`, err: `"yarn" is not supported`},
		{name: "missing sizes", json: `{"model_type":"qwen3"}`, err: "must be positive"},
		{name: "bad eos", json: `{"model_type":"qwen3","eos_token_id":"x"}`, err: "eos_token_id"},
		{name: "not json", json: `{`, err: "unexpected end"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseConfig([]byte(tc.json))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c)
		})
	}
}

func FuzzParseConfig(f *testing.F) {
	for _, fam := range []Family{Qwen3, Qwen2, Llama} {
		c, _ := NewConfig(fam, SizeTiny)
		b, _ := jsonMarshal(c.hfConfig())
		f.Add(b)
	}
	f.Add([]byte(`{"model_type":"llama","rope_parameters":{"rope_type":"llama3"}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseConfig(b)
		if err != nil {
			return
		}
		// Whatever validates must give a usable rotary table and dims.
		if len(c.invFreq()) != c.HeadDim/2 || c.QDim() <= 0 || c.NumAttentionHeads%c.NumKeyValueHeads != 0 {
			t.Fatalf("accepted inconsistent config %+v", c)
		}
	})
}

// tinyModel writes a tiny random checkpoint of fam and loads it.
func tinyModel(t testing.TB, fam Family, dtype safetensors.DType, opts Options) (*Model, string) {
	t.Helper()
	cfg, err := NewConfig(fam, SizeTiny)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := WriteRandom(dir, cfg, 7, dtype); err != nil {
		t.Fatal(err)
	}
	m, err := LoadWith(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return m, dir
}

func TestConfigRoundTrip(t *testing.T) {
	for _, fam := range []Family{Qwen3, Qwen2, Llama} {
		for _, size := range []string{SizeTiny, Size06B} {
			want, err := NewConfig(fam, size)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := jsonMarshal(want.hfConfig())
			got, err := ParseConfig(b)
			if err != nil {
				t.Fatalf("%s %s: %v", fam, size, err)
			}
			gb, _ := jsonMarshal(got.hfConfig())
			if string(gb) != string(b) {
				t.Errorf("%s %s: config.json does not round-trip:\n%s\n%s", fam, size, b, gb)
			}
		}
	}
}

func TestLoadShapeError(t *testing.T) {
	cfg, _ := NewConfig(Qwen3, SizeTiny)
	dir := t.TempDir()
	if err := WriteRandom(dir, cfg, 1, safetensors.F32); err != nil {
		t.Fatal(err)
	}
	// Claim a wider MLP than the weights have.
	raw, _ := os.ReadFile(filepath.Join(dir, "config.json"))
	raw = []byte(strings.Replace(string(raw), `"intermediate_size": 128`, `"intermediate_size": 256`, 1))
	if err := os.WriteFile(filepath.Join(dir, "config.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(dir)
	want := "load model.safetensors: tensor model.layers.0.mlp.gate_proj.weight: shape [128 64], want [256 64]"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
}

// TestBF16Weights checks that keeping bf16 weights in bf16 (Load's default
// for a bf16 checkpoint) computes what widening them to f32 computes, for
// prefill (panel path) and decode (direct path).
func TestBF16Weights(t *testing.T) {
	cfg, _ := NewConfig(Qwen2, SizeTiny)
	dir := t.TempDir()
	if err := WriteRandom(dir, cfg, 3, safetensors.BF16); err != nil {
		t.Fatal(err)
	}
	m32, err := LoadWith(dir, Options{WeightDType: "f32"})
	if err != nil {
		t.Fatal(err)
	}
	m16, err := Load(dir) // keeps the checkpoint's bf16
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LoadWith(dir, Options{WeightDType: "f16"}); err == nil {
		t.Error("unknown weight dtype accepted")
	}
	m16f, err := LoadWith(dir, Options{WeightDType: "bf16"})
	if err != nil {
		t.Fatal(err)
	}
	if !m16.Weights.BF16() || !m16f.Weights.BF16() || m32.Weights.BF16() {
		t.Fatal("weight dtypes not as requested")
	}
	ids := []int32{5, 77, 1000, 151000, 42, 9, 9, 9, 300, 12, 13, 14}
	ctx := context.Background()
	for _, n := range []int{1, len(ids)} {
		s32, s16 := m32.NewSequence(), m16.NewSequence()
		a, err := m32.Prefill(ctx, s32, ids[:n], nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := m16.Prefill(ctx, s16, ids[:n], nil)
		if err != nil {
			t.Fatal(err)
		}
		// Bitwise: widening is exact and the order of summation is the
		// same (x·Wᵀ runs on the Go kernels in every build).
		tol := 0.0
		assertClose(t, "prefill", a, b, tol)
		da, _ := m32.DecodeStep([]*Sequence{s32}, []int32{3}, nil)
		db, _ := m16.DecodeStep([]*Sequence{s16}, []int32{3}, nil)
		assertClose(t, "decode", da[0], db[0], tol)
	}
}

func assertClose(t *testing.T, what string, got, want []float32, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if math.Abs(float64(got[i]-want[i])) > tol*math.Max(1, math.Abs(float64(want[i]))) {
			t.Fatalf("%s: [%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}

// TestTruncateAndContinue rewinds a sequence to a shared prefix and checks
// that continuing it matches a fresh sequence.
func TestTruncateAndContinue(t *testing.T) {
	m, _ := tinyModel(t, Llama, safetensors.F32, Options{})
	ctx := context.Background()
	s := m.NewSequence()
	if _, err := m.Prefill(ctx, s, []int32{1, 2, 3, 4, 5, 6}, nil); err != nil {
		t.Fatal(err)
	}
	s.Truncate(3)
	got, err := m.Prefill(ctx, s, []int32{9, 8}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := m.Prefill(ctx, m.NewSequence(), []int32{1, 2, 3, 9, 8}, nil)
	if err != nil {
		t.Fatal(err)
	}
	assertClose(t, "after truncate", got, want, 1e-5)
	if s.Len() != 5 || fmt.Sprint(s.Tokens()) != "[1 2 3 9 8]" {
		t.Errorf("Len = %d, Tokens = %v; want 5, [1 2 3 9 8]", s.Len(), s.Tokens())
	}
	// A clone continues independently of its original.
	c := s.Clone()
	a, _ := m.DecodeStep([]*Sequence{c}, []int32{7}, nil)
	s.Truncate(2)
	if c.Len() != 6 || s.Len() != 2 {
		t.Errorf("clone Len %d, original Len %d", c.Len(), s.Len())
	}
	fresh, _ := m.Prefill(ctx, m.NewSequence(), []int32{1, 2, 3, 9, 8, 7}, nil)
	assertClose(t, "clone decode", a[0], fresh, 1e-5)
}

func TestForwardErrors(t *testing.T) {
	m, _ := tinyModel(t, Qwen3, safetensors.F32, Options{})
	ctx := context.Background()
	s := m.NewSequence()
	if _, err := m.Prefill(ctx, s, []int32{1, 151936}, nil); err == nil || !strings.Contains(err.Error(), "outside the vocabulary") {
		t.Errorf("bad id: err = %v", err)
	}
	if s.Len() != 0 {
		t.Errorf("failed prefill left %d positions", s.Len())
	}
	if _, err := m.DecodeStep([]*Sequence{s, s}, []int32{1, 2}, nil); err == nil {
		t.Error("duplicate sequence accepted")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := m.Score(cctx, []int32{1}, []int32{2}, nil); err == nil {
		t.Error("cancelled score succeeded")
	}
}

// TestConcurrentUse runs prefills on one model from several goroutines (the
// model is read-only; go test -race checks it).
func TestConcurrentUse(t *testing.T) {
	m, _ := tinyModel(t, Qwen3, safetensors.F32, Options{})
	ids := []int32{10, 20, 30, 40}
	want, err := m.Prefill(context.Background(), m.NewSequence(), ids, nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := m.Prefill(context.Background(), m.NewSequence(), ids, nil)
			if err != nil {
				t.Error(err)
				return
			}
			assertClose(t, "concurrent prefill", got, want, 0)
		}()
	}
	wg.Wait()
}

// TestAdapterSaveLoad: a fresh adapter (B = 0) changes nothing; one with
// random B saved and loaded back computes what it computed before saving.
func TestAdapterSaveLoad(t *testing.T) {
	m, _ := tinyModel(t, Llama, safetensors.F32, Options{})
	ctx := context.Background()
	ids := []int32{3, 1, 4, 1, 5, 9, 2, 6}
	base, _ := m.Logits(ctx, ids, nil)
	ad, err := m.NewAdapter(8, 16, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	fresh, _ := m.Logits(ctx, ids, ad)
	assertClose(t, "fresh adapter", fresh, base, 1e-6)
	r := rand.New(rand.NewPCG(1, 1))
	for _, layer := range ad.Layers {
		for _, lo := range layer {
			for i := range lo.B {
				lo.B[i] = float32(r.NormFloat64() * 0.1)
			}
		}
	}
	before, _ := m.Logits(ctx, ids, ad)
	dir := t.TempDir()
	if err := ad.Save(dir); err != nil {
		t.Fatal(err)
	}
	loaded, err := m.LoadAdapter(dir)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := m.Logits(ctx, ids, loaded)
	assertClose(t, "saved and loaded adapter", after, before, 0)
	if _, err := m.NewAdapter(4, 8, []string{"qkv"}, 1); err == nil {
		t.Error("unknown target module accepted")
	}
}

func TestSample(t *testing.T) {
	logits := []float32{1, 3, 2, 0.5, 3}
	lse := float64(LogSumExp(logits))
	want := func(id int32) float32 { return float32(float64(logits[id]) - lse) }
	id, lp := Sample(logits, SamplingParams{}, nil)
	if id != 1 || lp != want(1) {
		t.Errorf("greedy = %d, %v; want 1, %v", id, lp, want(1))
	}
	tests := []struct {
		name    string
		p       SamplingParams
		allowed map[int32]bool
	}{
		{"top_k 2", SamplingParams{Temperature: 1, TopK: 2}, map[int32]bool{1: true, 4: true}},
		{"top_p small", SamplingParams{Temperature: 1, TopP: 0.3}, map[int32]bool{1: true}},
		{"top_p 0.9", SamplingParams{Temperature: 1, TopP: 0.9}, map[int32]bool{1: true, 4: true, 2: true}},
		{"high temperature", SamplingParams{Temperature: 5}, map[int32]bool{0: true, 1: true, 2: true, 3: true, 4: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(9, 9))
			seen := map[int32]int{}
			for range 2000 {
				id, lp := Sample(logits, tc.p, r)
				if !tc.allowed[id] {
					t.Fatalf("sampled %d outside %v", id, tc.allowed)
				}
				if lp != want(id) {
					t.Fatalf("logprob of %d = %v, want the raw log-softmax %v", id, lp, want(id))
				}
				seen[id]++
			}
			if len(seen) != len(tc.allowed) {
				t.Errorf("sampled %v, expected every one of %v", seen, tc.allowed)
			}
		})
	}
	// Temperature 1 without filters follows softmax: check frequencies.
	r := rand.New(rand.NewPCG(2, 3))
	counts := make([]int, len(logits))
	const n = 200000
	for range n {
		id, _ := Sample(logits, SamplingParams{Temperature: 1}, r)
		counts[id]++
	}
	for i, c := range counts {
		p := math.Exp(float64(want(int32(i))))
		if math.Abs(float64(c)/n-p) > 0.005 {
			t.Errorf("token %d: frequency %.4f, softmax %.4f", i, float64(c)/n, p)
		}
	}
	// The same seed gives the same draws.
	a, b := rand.New(rand.NewPCG(5, 5)), rand.New(rand.NewPCG(5, 5))
	for range 100 {
		x, _ := Sample(logits, SamplingParams{Temperature: 0.8, TopP: 0.95, TopK: 4}, a)
		y, _ := Sample(logits, SamplingParams{Temperature: 0.8, TopP: 0.95, TopK: 4}, b)
		if x != y {
			t.Fatal("same seed, different samples")
		}
	}
}

func TestTopLogprobs(t *testing.T) {
	logits := []float32{1, 3, 2, 0.5, 3}
	top := TopLogprobs(logits, 3)
	lse := LogSumExp(logits)
	wantIDs := []int32{1, 4, 2}
	for i, tl := range top {
		if tl.ID != wantIDs[i] || tl.Logprob != logits[tl.ID]-lse {
			t.Errorf("top[%d] = %+v, want id %d logprob %v", i, tl, wantIDs[i], logits[wantIDs[i]]-lse)
		}
	}
	if len(TopLogprobs(logits, 10)) != 5 || TopLogprobs(logits, 0) != nil {
		t.Error("wrong length for n ≥ vocab or n = 0")
	}
}

func BenchmarkSample(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	logits := make([]float32, 151936)
	for i := range logits {
		logits[i] = float32(r.NormFloat64() * 2)
	}
	for _, p := range []SamplingParams{{}, {Temperature: 1}, {Temperature: 0.6, TopP: 0.95, TopK: 20}, {Temperature: 0.7, TopP: 0.8}} {
		b.Run(fmt.Sprintf("T=%v,top_p=%v,top_k=%d", p.Temperature, p.TopP, p.TopK), func(b *testing.B) {
			for b.Loop() {
				Sample(logits, p, r)
			}
		})
	}
}

func TestExpf(t *testing.T) {
	worst := 0.0
	for x := -103.0; x <= 88.7; x += 0.0137 {
		got, want := float64(expf(float32(x))), math.Exp(float64(float32(x)))
		if want < 1e-37 {
			if math.Abs(got-want) > 1e-44 {
				t.Fatalf("expf(%v) = %g, want %g", x, got, want)
			}
			continue
		}
		worst = math.Max(worst, math.Abs(got-want)/want)
	}
	if worst > 3e-7 {
		t.Errorf("expf worst relative error %.3g, want ≤ 3e-7", worst)
	}
	if expf(0) != 1 || expf(-200) != 0 || !math.IsInf(float64(expf(100)), 1) {
		t.Error("expf edge cases")
	}
}

// TestBatchInvariance decodes three sequences (different lengths, one with
// an adapter) together and each alone, and scores the result with one
// prefill: with the Go kernels every number agrees bitwise (see
// blas.gemmNTRangeAVX2), so a request's tokens and logprobs do not depend on
// what else is being served. OpenBLAS does not promise that; there the check
// is a tolerance.
func TestBatchInvariance(t *testing.T) {
	m, _ := tinyModel(t, Qwen3, safetensors.F32, Options{})
	ad, err := m.NewAdapter(4, 8, nil, 3)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(4, 4))
	for _, layer := range ad.Layers {
		for _, lo := range layer {
			for i := range lo.B {
				lo.B[i] = float32(r.NormFloat64() * 0.1)
			}
		}
	}
	// Bitwise in every build: x·Wᵀ runs on the Go kernels, which give a
	// row the same bits whatever batch it is in.
	tol := 0.0
	ctx := context.Background()
	prompts := [][]int32{{5, 6, 7}, {100, 200, 300, 400, 500, 600, 700}, {42}}
	adapters := []*Adapter{nil, ad, nil}
	const steps = 5
	decode := func(idx []int) (ids [][]int32, lps [][]float32, logits [][][]float32) {
		seqs := make([]*Sequence, len(idx))
		next := make([]int32, len(idx))
		ads := make([]*Adapter, len(idx))
		ids, lps, logits = make([][]int32, len(idx)), make([][]float32, len(idx)), make([][][]float32, len(idx))
		for j, i := range idx {
			seqs[j], ads[j] = m.NewSequence(), adapters[i]
			l, err := m.Prefill(ctx, seqs[j], prompts[i], ads[j])
			if err != nil {
				t.Fatal(err)
			}
			var lp float32
			next[j], lp = Sample(l, SamplingParams{}, nil)
			ids[j], lps[j] = append(ids[j], next[j]), append(lps[j], lp)
		}
		for range steps {
			out, err := m.DecodeStep(seqs, next, ads)
			if err != nil {
				t.Fatal(err)
			}
			for j, l := range out {
				var lp float32
				next[j], lp = Sample(l, SamplingParams{}, nil)
				ids[j], lps[j], logits[j] = append(ids[j], next[j]), append(lps[j], lp), append(logits[j], l)
			}
		}
		return ids, lps, logits
	}
	bIDs, bLPs, bLogits := decode([]int{0, 1, 2})
	for i := range prompts {
		aIDs, aLPs, aLogits := decode([]int{i})
		if fmt.Sprint(aIDs[0]) != fmt.Sprint(bIDs[i]) {
			t.Fatalf("sequence %d: alone %v, batched %v", i, aIDs[0], bIDs[i])
		}
		for s := range aLogits[0] {
			assertClose(t, fmt.Sprintf("sequence %d step %d logits alone vs batched", i, s), aLogits[0][s], bLogits[i][s], tol)
		}
		assertClose(t, "logprobs alone vs batched", aLPs[0], bLPs[i], tol)
		scored, err := m.Score(ctx, prompts[i], bIDs[i], adapters[i])
		if err != nil {
			t.Fatal(err)
		}
		assertClose(t, fmt.Sprintf("sequence %d: Score vs sampled logprobs", i), scored, bLPs[i], tol)
	}
}

func FuzzParseAdapterConfig(f *testing.F) {
	raw, err := os.ReadFile(filepath.Join("testdata", "adapter_qwen3", "adapter_config.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw, "base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight")
	f.Add([]byte(`{"r":4,"lora_alpha":8,"alpha_pattern":{"q_proj":2},"use_rslora":true}`), "x.lora_B.weight")
	f.Fuzz(func(t *testing.T, raw []byte, name string) {
		ac, err := ParseAdapterConfig(raw)
		if err != nil {
			return
		}
		if s := ac.scale(name, ac.R); math.IsNaN(float64(s)) {
			t.Fatalf("scale NaN for %+v", ac)
		}
	})
}

func TestParseAdapterConfig(t *testing.T) {
	for _, tc := range []struct{ json, err string }{
		{`{"peft_type":"LORA","r":16,"lora_alpha":32}`, ""},
		{`{"peft_type":"IA3","r":16}`, "peft_type"},
		{`{"r":0,"lora_alpha":32}`, "positive rank"},
		{`{"r":4,"use_dora":true}`, "use_dora"},
		{`[`, "unexpected end"},
	} {
		_, err := ParseAdapterConfig([]byte(tc.json))
		if (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: err = %v, want %q", tc.json, err, tc.err)
		}
	}
	ac := AdapterConfig{R: 4, LoraAlpha: 8, AlphaPattern: map[string]float64{"q_proj": 2}}
	if s := ac.scale("base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight", 4); s != 0.5 {
		t.Errorf("alpha_pattern scale = %v, want 0.5", s)
	}
	if s := ac.scale("base_model.model.model.layers.0.self_attn.k_proj.lora_A.weight", 4); s != 2 {
		t.Errorf("scale = %v, want 2", s)
	}
	ac.UseRSLoRA = true
	if s := ac.scale("base_model.model.model.layers.0.self_attn.k_proj.lora_A.weight", 4); s != 4 {
		t.Errorf("rsLoRA scale = %v, want 8/sqrt(4) = 4", s)
	}
}

// TestStep mixes a new prompt's prefill with another sequence's decode in
// one pass and compares with separate Prefill and DecodeStep calls.
func TestStep(t *testing.T) {
	m, _ := tinyModel(t, Qwen2, safetensors.F32, Options{})
	ctx := context.Background()
	// Bitwise in every build: x·Wᵀ runs on the Go kernels, which give a
	// row the same bits whatever batch it is in.
	tol := 0.0
	// Separately.
	a := m.NewSequence()
	if _, err := m.Prefill(ctx, a, []int32{4, 5, 6}, nil); err != nil {
		t.Fatal(err)
	}
	wantA, _ := m.DecodeStep([]*Sequence{a}, []int32{7}, nil)
	wantB, _ := m.Prefill(ctx, m.NewSequence(), []int32{100, 101, 102, 103}, nil)
	// Together.
	a2 := m.NewSequence()
	if _, err := m.Prefill(ctx, a2, []int32{4, 5, 6}, nil); err != nil {
		t.Fatal(err)
	}
	b2 := m.NewSequence()
	got, err := m.Step(ctx, []Chunk{{Seq: a2, IDs: []int32{7}}, {Seq: b2, IDs: []int32{100, 101, 102, 103}}})
	if err != nil {
		t.Fatal(err)
	}
	assertClose(t, "decode row", got[0], wantA[0], tol)
	assertClose(t, "prefill chunk", got[1], wantB, tol)
	if a2.Len() != 4 || b2.Len() != 4 || fmt.Sprint(b2.Tokens()) != "[100 101 102 103]" {
		t.Errorf("lengths %d, %d; tokens %v", a2.Len(), b2.Len(), b2.Tokens())
	}
	if _, err := m.Step(ctx, []Chunk{{Seq: a2, IDs: []int32{1}}, {Seq: a2, IDs: []int32{2}}}); err == nil {
		t.Error("same sequence twice accepted")
	}
	if _, err := m.Step(ctx, []Chunk{{Seq: b2, IDs: []int32{999999}}}); err == nil || b2.Len() != 4 {
		t.Errorf("bad id: err %v, length %d", err, b2.Len())
	}
}
