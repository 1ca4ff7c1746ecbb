package model

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/clawrl/clawrl/safetensors"
)

// The parity fixtures hold what transformers 5 (and PEFT) compute for tiny
// random checkpoints; model/testdata/gen_parity.py makes them and says how
// to re-run it. The checkpoints themselves are rebuilt here from the seed.

type logitSummary struct {
	LSE             []float64   `json:"lse"`
	TopIDs          [][]int32   `json:"top_ids"`
	TopLogits       [][]float64 `json:"top_logits"`
	SamplePositions []int       `json:"sample_positions"`
	SampleStride    int         `json:"sample_stride"`
	SampleLogits    [][]float64 `json:"sample_logits"`
}

type parityFixture struct {
	Arch           string             `json:"arch"`
	Size           string             `json:"size"`
	Seed           uint64             `json:"seed"`
	WeightSums     map[string]float64 `json:"weight_sums"`
	IDs            []int32            `json:"ids"`
	Logits         logitSummary       `json:"logits"`
	ScorePromptLen int                `json:"score_prompt_len"`
	Score          []float64          `json:"score"`
	Greedy         []struct {
		Prompt []int32 `json:"prompt"`
		IDs    []int32 `json:"ids"`
	} `json:"greedy"`
	AdapterLen    int          `json:"adapter_len"`
	AdapterLogits logitSummary `json:"adapter_logits"`
}

// parityTol is the relative tolerance against transformers (float32 both).
const parityTol = 1e-4

func closeRel(got, want float64) bool {
	return math.Abs(got-want) <= parityTol*math.Max(1, math.Abs(want))
}

var (
	parityOnce   sync.Map // arch → *parityCase
	parityBuilds sync.Mutex
)

type parityCase struct {
	fx  *parityFixture
	m   *Model
	dir string
}

// loadParity reads the fixture for arch and builds its model from the seed
// (once per test binary; the checkpoint lives in a temp dir for the run).
func loadParity(t *testing.T, arch string) *parityCase {
	t.Helper()
	parityBuilds.Lock()
	defer parityBuilds.Unlock()
	if pc, ok := parityOnce.Load(arch); ok {
		return pc.(*parityCase)
	}
	raw, err := os.ReadFile(filepath.Join("testdata", "parity_"+arch+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var fx parityFixture
	if err := json.Unmarshal(raw, &fx); err != nil {
		t.Fatalf("parity_%s.json: %v", arch, err)
	}
	cfg, err := NewConfig(Family(fx.Arch), fx.Size)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "clawrl-parity-"+arch)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteRandom(dir, cfg, fx.Seed, safetensors.F32); err != nil {
		t.Fatal(err)
	}
	m, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	checkWeightSums(t, dir, fx.WeightSums)
	pc := &parityCase{fx: &fx, m: m, dir: dir}
	parityOnce.Store(arch, pc)
	return pc
}

func TestMain(m *testing.M) {
	code := m.Run()
	parityOnce.Range(func(_, v any) bool { os.RemoveAll(v.(*parityCase).dir); return true })
	os.Exit(code)
}

func checkWeightSums(t *testing.T, dir string, sums map[string]float64) {
	t.Helper()
	ck, err := safetensors.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	for name, want := range sums {
		x, err := ck.Tensor(name)
		if err != nil {
			t.Fatal(err)
		}
		v, _ := x.Float32()
		var s float64
		for _, f := range v {
			s += float64(f)
		}
		if math.Abs(s-want) > 1e-6*math.Max(1, math.Abs(want)) {
			t.Fatalf("random weights drifted from the fixture's generator: sum(%s) = %.9g, fixture %.9g (re-run testdata/gen_parity.py)", name, s, want)
		}
	}
}

// checkRow compares one position's logits with the fixture's summary.
func checkRow(t *testing.T, what string, row []float32, s *logitSummary, pos int) {
	t.Helper()
	if got := float64(LogSumExp(row)); !closeRel(got, s.LSE[pos]) {
		t.Errorf("%s: position %d: logsumexp %.7g, transformers %.7g", what, pos, got, s.LSE[pos])
	}
	for j, id := range s.TopIDs[pos] {
		if got := float64(row[id]); !closeRel(got, s.TopLogits[pos][j]) {
			t.Errorf("%s: position %d: logit[%d] %.7g, transformers %.7g", what, pos, id, got, s.TopLogits[pos][j])
		}
	}
	// The argmax must agree unless transformers' top two are within rounding.
	if top := s.TopLogits[pos]; top[0]-top[1] > 1e-3 {
		if got := argmax(row); int32(got) != s.TopIDs[pos][0] {
			t.Errorf("%s: position %d: argmax %d, transformers %d", what, pos, got, s.TopIDs[pos][0])
		}
	}
	for k, p := range s.SamplePositions {
		if p != pos {
			continue
		}
		for j, want := range s.SampleLogits[k] {
			if got := float64(row[j*s.SampleStride]); !closeRel(got, want) {
				t.Errorf("%s: position %d: logit[%d] %.7g, transformers %.7g", what, pos, j*s.SampleStride, got, want)
				return
			}
		}
	}
}

// checkAllRows runs ids as one sequence and checks the logits at every
// position, a chunk of rows at a time (all 512×151,936 at once would be
// 300 MB).
func checkAllRows(t *testing.T, what string, m *Model, ids []int32, ad *Adapter, s *logitSummary) {
	t.Helper()
	H, V := m.Config.HiddenSize, m.Config.VocabSize
	logits := make([]float32, logitsChunk*V)
	err := m.extend(context.Background(), m.NewSequence(), ids, ad, func(first int, hidden []float32) {
		rows := len(hidden) / H
		for r0 := 0; r0 < rows; r0 += logitsChunk {
			n := min(logitsChunk, rows-r0)
			lmheadForward(logits, hidden[r0*H:], m.Weights.LMHead, n)
			for i := 0; i < n; i++ {
				checkRow(t, what, logits[i*V:(i+1)*V], s, first+r0+i)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}

var parityArchs = []string{"qwen3", "qwen2", "llama"}

func TestParityLogits(t *testing.T) {
	for _, arch := range parityArchs {
		t.Run(arch, func(t *testing.T) {
			pc := loadParity(t, arch)
			checkAllRows(t, "full forward", pc.m, pc.fx.IDs, nil, &pc.fx.Logits)
			// Prefill of prompts of several lengths gives the last row, and
			// a prefill continued by a second prefill matches too.
			for _, n := range []int{1, 2, 7, 100} {
				seq := pc.m.NewSequence()
				row, err := pc.m.Prefill(context.Background(), seq, pc.fx.IDs[:n], nil)
				if err != nil {
					t.Fatal(err)
				}
				checkRow(t, fmt.Sprintf("prefill of %d", n), row, &pc.fx.Logits, n-1)
				row, err = pc.m.Prefill(context.Background(), seq, pc.fx.IDs[n:n+5], nil)
				if err != nil {
					t.Fatal(err)
				}
				checkRow(t, fmt.Sprintf("prefill of %d then 5", n), row, &pc.fx.Logits, n+4)
			}
		})
	}
}

func TestParityScore(t *testing.T) {
	for _, arch := range parityArchs {
		t.Run(arch, func(t *testing.T) {
			pc := loadParity(t, arch)
			p := pc.fx.ScorePromptLen
			got, err := pc.m.Score(context.Background(), pc.fx.IDs[:p], pc.fx.IDs[p:], nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(pc.fx.Score) {
				t.Fatalf("%d logprobs, want %d", len(got), len(pc.fx.Score))
			}
			for i := range got {
				if !closeRel(float64(got[i]), pc.fx.Score[i]) {
					t.Errorf("logprob[%d] = %.7g, transformers %.7g", i, got[i], pc.fx.Score[i])
				}
			}
		})
	}
}

// TestParityGreedy decodes every greedy prompt at once in one batch (so the
// batch mixes sequences of different lengths) and compares with
// transformers' generate with its KV cache.
func TestParityGreedy(t *testing.T) {
	for _, arch := range parityArchs {
		t.Run(arch, func(t *testing.T) {
			pc := loadParity(t, arch)
			n := len(pc.fx.Greedy)
			seqs := make([]*Sequence, n)
			next := make([]int32, n)
			got := make([][]int32, n)
			for i, g := range pc.fx.Greedy {
				seqs[i] = pc.m.NewSequence()
				logits, err := pc.m.Prefill(context.Background(), seqs[i], g.Prompt, nil)
				if err != nil {
					t.Fatal(err)
				}
				next[i], _ = Sample(logits, SamplingParams{}, nil)
			}
			for step := 0; ; step++ {
				for i := range next {
					got[i] = append(got[i], next[i])
				}
				if step == len(pc.fx.Greedy[0].IDs)-1 {
					break
				}
				all, err := pc.m.DecodeStep(seqs, next, nil)
				if err != nil {
					t.Fatal(err)
				}
				for i, logits := range all {
					next[i], _ = Sample(logits, SamplingParams{}, nil)
				}
			}
			for i, g := range pc.fx.Greedy {
				if fmt.Sprint(got[i]) != fmt.Sprint(g.IDs) {
					t.Errorf("prompt %d: greedy ids\n got %v\nwant %v", i, got[i], g.IDs)
				}
			}
		})
	}
}

func TestParityAdapter(t *testing.T) {
	for _, arch := range parityArchs {
		t.Run(arch, func(t *testing.T) {
			pc := loadParity(t, arch)
			ad, err := pc.m.LoadAdapter(filepath.Join("testdata", "adapter_"+arch))
			if err != nil {
				t.Fatal(err)
			}
			ids := pc.fx.IDs[:pc.fx.AdapterLen]
			checkAllRows(t, "adapter forward", pc.m, ids, ad, &pc.fx.AdapterLogits)
			// One decode batch mixing the adapter and the base weights gives
			// each row what it gets alone.
			prompt := ids[:10]
			sa, sb := pc.m.NewSequence(), pc.m.NewSequence()
			if _, err := pc.m.Prefill(context.Background(), sa, prompt, ad); err != nil {
				t.Fatal(err)
			}
			if _, err := pc.m.Prefill(context.Background(), sb, prompt, nil); err != nil {
				t.Fatal(err)
			}
			out, err := pc.m.DecodeStep([]*Sequence{sa, sb}, []int32{ids[10], ids[10]}, []*Adapter{ad, nil})
			if err != nil {
				t.Fatal(err)
			}
			checkRow(t, "batched decode with adapter", out[0], &pc.fx.AdapterLogits, 10)
			checkRow(t, "batched decode without adapter", out[1], &pc.fx.Logits, 10)
		})
	}
}
