//go:build ignore

// The 1.5B's LoRA gradients after one Accumulate, hashed (SHA-256 of every
// gradient's bits): copied into train/ as zz_real_test.go and run at 3ccb99a and at
// this round's commits, with ZZ_GGUF=…/Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf and
// ZZ_BUDGET=1 (lean blocks) or -1 (every activation kept):
//
//	go test -v -run ZZRealHash -count=1 ./train
//
// gradhash.txt holds the outputs.
package train

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"strconv"
	"testing"

	"github.com/clawrl/clawrl/model"
)

func TestZZRealHash(t *testing.T) {
	path := os.Getenv("ZZ_GGUF")
	if path == "" {
		t.Skip()
	}
	m, err := model.LoadWith(path, model.Options{WeightDType: "quant"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := FromModel(m, false)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := strconv.ParseInt(os.Getenv("ZZ_BUDGET"), 10, 64)
	tr, err := New(w, Config{Precision: PrecisionBF16, Seed: 3, ActivationBudget: b})
	if err != nil {
		t.Fatal(err)
	}
	seqs := randomSeqs(m.Config.VocabSize, 1, [2]int{40, 24}, [2]int{30, 20})
	obj := newWeightedObjective(seqs, 11)
	tr.ZeroGrad()
	if _, _, err := tr.Accumulate(context.Background(), seqs, obj, 1); err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	for _, p := range tr.Params() {
		for _, g := range p.Grad {
			binary.Write(h, binary.LittleEndian, math.Float32bits(g))
		}
	}
	fmt.Printf("HASH real %x lean=%v\n", h.Sum(nil)[:8], tr.ws.lean)
}
