package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/clawrl/clawrl/engine/native"
	"github.com/clawrl/clawrl/model"
	"github.com/clawrl/clawrl/tokenizer/vocab"
)

// TestBenchGRPOPrompts: prompts have exactly the asked token count, encode
// to the ids handed to the reference, differ, and repeat for a seed.
func TestBenchGRPOPrompts(t *testing.T) {
	dir := t.TempDir()
	if err := vocab.Write(string(model.Qwen3), dir); err != nil {
		t.Fatal(err)
	}
	cfg, err := model.NewConfig(model.Qwen3, model.SizeTiny)
	if err != nil {
		t.Fatal(err)
	}
	f, err := native.LoadFormat(dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{8, 96, 128} {
		texts, ids := benchGRPOPrompts(f, 3, n, 1)
		for i := range texts {
			if len(ids[i]) != n || !slices.Equal(f.Encode(texts[i]), ids[i]) {
				t.Fatalf("prompt %d of %d tokens: %d ids for %q", i, n, len(ids[i]), texts[i])
			}
		}
		if texts[0] == texts[1] {
			t.Fatalf("prompts 0 and 1 are equal: %q", texts[0])
		}
		again, _ := benchGRPOPrompts(f, 3, n, 1)
		if !slices.Equal(again, texts) {
			t.Fatal("same seed, different prompts")
		}
	}
}

// TestBenchGRPOReferenceMissing: without the reference's interpreter or
// modules the reference comes back as an error saying what is missing,
// which the command prints as a skip.
func TestBenchGRPOReferenceMissing(t *testing.T) {
	_, err := benchGRPOReference("/nonexistent/python3", grpoBenchSpec{Impl: "trl"})
	if err == nil || !strings.Contains(err.Error(), "cannot import") {
		t.Fatalf("error %v, want one naming the missing modules", err)
	}
}

func TestBenchGRPORefEnv(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  []string
		want []string
	}{
		{"unset", []string{"A=1"}, []string{"A=1", "OMP_WAIT_POLICY=PASSIVE"}},
		{"kept", []string{"OMP_WAIT_POLICY=ACTIVE"}, []string{"OMP_WAIT_POLICY=ACTIVE"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := benchGRPORefEnv(tc.env); !slices.Equal(got, tc.want) {
				t.Fatalf("benchGRPORefEnv(%v) = %v, want %v", tc.env, got, tc.want)
			}
		})
	}
}
