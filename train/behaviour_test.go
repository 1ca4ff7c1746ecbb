package train_test

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/engine/native"
	"github.com/clawrl/clawrl/model"
	"github.com/clawrl/clawrl/modelref/demotest"
	"github.com/clawrl/clawrl/quant"
	"github.com/clawrl/clawrl/safetensors"
	"github.com/clawrl/clawrl/tokenizer/vocab"
	"github.com/clawrl/clawrl/train"
)

// The trainer's forward is the serving forward: π_old recomputed by the
// trainer equals, bit for bit, the behaviour log-probabilities the native
// engine recorded while generating under the same weights, so PPO ratios
// start at exactly 1. The generations run several requests at once (batched
// decode steps, prefix-cache reuse) under a LoRA adapter with non-zero B,
// and the trainer scores them packed into micro-batches of several
// sequences. After one training step the published adapter and the trainer
// agree again. The quantized case serves and trains (QLoRA) on Q4_1 blocks
// (Q8_0 embeddings): the trainer's forward runs the same quantized kernels,
// with 8-bit activations (the "quant" weights) and with float32 ones
// ("quant-f32", the demo GGUF's default), whose kernels give a token the
// same bits in a batch of any size. A last case serves and trains the demo
// model's file (SmolLM2-135M-Instruct Q4_1, where `model pull smollm2` put
// it or $CLAWRL_DEMO_GGUF) as `clawrl serve` does (native.Open: quant-f32).
func TestScoreEqualsBehaviourLogprobs(t *testing.T) {
	for _, tc := range []struct {
		family         model.Family
		vocab          string
		quantized      bool
		f32Activations bool
		demo           bool
	}{{model.Qwen3, "qwen3", false, false, false}, {model.Qwen2, "qwen2", false, false, false}, {model.Llama, "llama", false, false, false},
		{model.Llama, "llama", true, false, false}, {model.Llama, "llama", true, true, false}, {model.Llama, "", true, true, true}} {
		name := string(tc.family)
		if tc.quantized {
			name += "-q4_1"
		}
		if tc.f32Activations {
			name += "-f32act"
		}
		if tc.demo {
			name = "demo-gguf"
		}
		t.Run(name, func(t *testing.T) {
			var e *native.Engine
			if tc.demo {
				var err error
				if e, err = native.Open(demotest.GGUF(t), native.Options{MaxBatch: 4}); err != nil {
					t.Fatal(err)
				}
			} else {
				e = tinyEngine(t, tc.family, tc.vocab, tc.quantized, tc.f32Activations)
			}
			defer e.Close()
			w, err := train.FromModel(e.Model(), false)
			if err != nil {
				t.Fatal(err)
			}
			if w.Quantized() != tc.quantized {
				t.Fatalf("trainer weights quantized = %v", w.Quantized())
			}
			tr, err := train.New(w, train.Config{Seed: 3, MicroBatchTokens: 96})
			if err != nil {
				t.Fatal(err)
			}
			// PEFT starts B at zero, which would leave the adapter's
			// forward untested: give it values.
			rng := rand.New(rand.NewPCG(7, 8))
			for _, p := range tr.Params() {
				if strings.Contains(p.Name, "lora_B") {
					for i := range p.Data {
						p.Data[i] = float32(0.05 * rng.NormFloat64())
					}
				}
			}
			vocabSize := e.Model().Config.VocabSize
			prompts := make([][]int32, 5)
			for i := range prompts {
				n := 7 + 9*i
				if i == 3 {
					// Shares prompt 2's first tokens: the engine reuses its
					// cached keys and values.
					prompts[i] = append(append([]int32(nil), prompts[2]...), 11, 12, 13)
					continue
				}
				for range n {
					prompts[i] = append(prompts[i], int32(rng.IntN(vocabSize)))
				}
			}
			for version := int64(1); version <= 2; version++ {
				adir := filepath.Join(t.TempDir(), "adapter")
				if err := tr.SaveAdapter(adir); err != nil {
					t.Fatal(err)
				}
				if err := e.Publish(context.Background(), version, adir); err != nil {
					t.Fatal(err)
				}
				seqs, behaviour := generate(t, e, prompts)
				scores, err := tr.Score(context.Background(), seqs)
				if err != nil {
					t.Fatal(err)
				}
				mismatches := 0
				for i, s := range scores {
					for j, lp := range s.Logprobs {
						if math.Float32bits(lp) != math.Float32bits(behaviour[i][j]) {
							if mismatches < 5 {
								t.Errorf("v%d sequence %d token %d: trainer %v (%08x), engine %v (%08x)", version, i, j,
									lp, math.Float32bits(lp), behaviour[i][j], math.Float32bits(behaviour[i][j]))
							}
							mismatches++
						}
					}
				}
				if mismatches > 0 {
					t.Fatalf("v%d: %d tokens differ", version, mismatches)
				}
				// A step that changes the adapter, for the next version.
				if _, err := tr.Step(context.Background(), seqs, nllObjective{}); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// tinyEngine serves a random tiny checkpoint of family, its linear weights
// as Q4_1 blocks (Q8_0 embeddings) when quantized, with float32
// activations when f32Activations.
func tinyEngine(t *testing.T, family model.Family, vocabFamily string, quantized, f32Activations bool) *native.Engine {
	t.Helper()
	dir := tinyCheckpoint(t, family, vocabFamily)
	m, err := model.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if quantized {
		if err := m.Weights.Quantize(quant.Q4_1, quant.Q8_0); err != nil {
			t.Fatal(err)
		}
		if f32Activations {
			w := m.Weights
			w.Embed.Q.F32Activations = true
			w.LMHead.Q.F32Activations = true
			for i := range w.Blocks {
				b := &w.Blocks[i]
				for _, l := range []*model.Linear{&b.Q, &b.K, &b.V, &b.O, &b.Gate, &b.Up, &b.Down} {
					l.Q.F32Activations = true
				}
			}
		}
	}
	f, err := native.LoadFormat(dir, m.Config)
	if err != nil {
		t.Fatal(err)
	}
	return native.New(m, f, native.Options{MaxBatch: 4})
}

// nllObjective is the summed negative log-likelihood.
type nllObjective struct{}

func (nllObjective) TokenLoss(i int, logp, entropy, dlogp, dentropy []float32) float64 {
	var s float64
	for j, lp := range logp {
		s -= float64(lp)
		dlogp[j] = -1
	}
	return s
}

// generate samples a completion of every prompt at once (so the engine
// batches their decode steps) under the current adapter and returns them as
// training sequences with their behaviour log-probabilities.
func generate(t *testing.T, e *native.Engine, prompts [][]int32) ([]train.Sequence, [][]float32) {
	t.Helper()
	seqs := make([]train.Sequence, len(prompts))
	lps := make([][]float32, len(prompts))
	errs := make([]error, len(prompts))
	var wg sync.WaitGroup
	for i, p := range prompts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			seed := int64(100 + i)
			g, err := e.Generate(context.Background(), engine.GenerateRequest{
				PromptIDs: p, MaxTokens: 12 + 5*i, Adapter: engine.AdapterCurrent,
				Sampling: engine.Sampling{Temperature: 1, Seed: &seed},
			}, func(engine.Token) error { return nil })
			if err != nil {
				errs[i] = err
				return
			}
			seqs[i].PromptIDs = p
			for _, tok := range g.Tokens {
				seqs[i].ResponseIDs = append(seqs[i].ResponseIDs, tok.ID)
				lps[i] = append(lps[i], tok.Logprob)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return seqs, lps
}

// tinyCheckpoint writes a random tiny checkpoint of family with the real
// tokenizer files, as `clawrl model new` does.
func tinyCheckpoint(t *testing.T, family model.Family, vocabFamily string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), string(family)+"-tiny")
	cfg, err := model.NewConfig(family, model.SizeTiny)
	if err != nil {
		t.Fatal(err)
	}
	if err := model.WriteRandom(dir, cfg, 1, safetensors.F32); err != nil {
		t.Fatal(err)
	}
	tj, tc, err := vocab.Files(vocabFamily)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), tj, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), tc, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}
