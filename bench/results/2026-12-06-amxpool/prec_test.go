//go:build ignore

// The LoRA gradients of one Accumulate on six real-text sequences (about 300
// tokens), written to ZZ_OUT as float32 per parameter, to compare the bf16
// backward on the AMX tiles (CLAWRL_AMX=1, this Xeon's default) and on
// VDPBF16PS (CLAWRL_AMX=0, as on a Zen 4) against the float32 backward:
// copied into train/ as zz_prec_test.go (then removed), built with
// `go test -c -o zz.test ./train`, and run by prec.sh; cmp.py compares.
package train

import (
	"context"
	"encoding/binary"
	"math"
	"os"
	"testing"

	"github.com/clawrl/clawrl/gguf"
	"github.com/clawrl/clawrl/model"
	"github.com/clawrl/clawrl/tokenizer"
)

var zzTexts = [][2]string{
	{"How do I make a cup of tea?", "Boil water, pour it over a tea bag in a cup, let it steep for three to five minutes, then remove the bag and add milk or sugar if you like."},
	{"What is photosynthesis?", "Photosynthesis is the process by which green plants use sunlight, water and carbon dioxide to make glucose and release oxygen. It happens mainly in the leaves, inside the chloroplasts."},
	{"Why is the sky blue?", "Sunlight is scattered by the molecules of the air, and blue light is scattered more than red light because it has a shorter wavelength, so the sky looks blue from the ground."},
	{"Give me tips for learning a new language.", "Practice a little every day, listen to native speakers, learn the most common words first, speak as early as you can without fear of mistakes, and review what you learned regularly."},
	{"What causes the seasons?", "The Earth's axis is tilted, so as it orbits the Sun each hemisphere receives more direct sunlight for part of the year, which makes summer, and less for the other part, which makes winter."},
	{"How do vaccines work?", "A vaccine shows the immune system a harmless piece or weakened form of a germ, so it learns to recognise it and can respond quickly if the real germ ever appears."},
}

func TestZZPrec(t *testing.T) {
	path := os.Getenv("ZZ_GGUF")
	if path == "" {
		t.Skip()
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.FromGGUF(f.Header)
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.LoadWith(path, model.Options{WeightDType: os.Getenv("ZZ_DTYPE")})
	if err != nil {
		t.Fatal(err)
	}
	w, err := FromModel(m, false)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := New(w, Config{Precision: Precision(os.Getenv("ZZ_PREC")), Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	var seqs []Sequence
	for _, x := range zzTexts {
		seqs = append(seqs, Sequence{PromptIDs: tok.Encode("User: " + x[0] + "\nAssistant: "), ResponseIDs: tok.Encode(x[1])})
	}
	obj := newWeightedObjective(seqs, 11)
	tr.ZeroGrad()
	if _, _, err := tr.Accumulate(context.Background(), seqs, obj, 1); err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(os.Getenv("ZZ_OUT"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	for _, p := range tr.Params() {
		binary.Write(out, binary.LittleEndian, int32(len(p.Grad)))
		for _, g := range p.Grad {
			binary.Write(out, binary.LittleEndian, math.Float32bits(g))
		}
	}
	t.Logf("kernel run, %d params", len(tr.Params()))
}
