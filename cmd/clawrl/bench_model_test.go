package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawrl/clawrl/model"
	"github.com/clawrl/clawrl/safetensors"
)

// fakePython writes an executable that stands in for the interpreter: it
// saves its stdin (the spec) to spec.json beside itself, checks it was
// called as `python -c SCRIPT`, then prints stdout and stderr and exits
// with code.
func fakePython(t *testing.T, stdout, stderr string, code int) (python, specPath string) {
	t.Helper()
	dir := t.TempDir()
	specPath = filepath.Join(dir, "spec.json")
	for name, text := range map[string]string{"out": stdout, "err": stderr} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script := "#!/bin/sh\n" +
		"[ \"$1\" = -c ] && [ -n \"$2\" ] || { echo \"called as $*\" >&2; exit 9; }\n" +
		"cat > '" + specPath + "'\n" +
		"cat '" + filepath.Join(dir, "out") + "'\n" +
		"cat '" + filepath.Join(dir, "err") + "' >&2\n" +
		"exit " + string(rune('0'+code)) + "\n"
	python = filepath.Join(dir, "python")
	if err := os.WriteFile(python, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return python, specPath
}

func TestRunBenchScript(t *testing.T) {
	tests := []struct {
		name, stdout, stderr string
		code                 int
		want                 benchResult
		wantErr              string // substring; "" = no error
	}{
		{
			name:   "result",
			stdout: `{"engine": "llama.cpp (xllamacpp 1)", "prefill_tok_s": 100.5, "decode_tok_s": 20, "batch_decode_tok_s": 50, "first_ids": [1, 2, 3]}` + "\n",
			stderr: "llama.cpp logs go here\n",
			want:   benchResult{Engine: "llama.cpp (xllamacpp 1)", PrefillTokS: 100.5, DecodeTokS: 20, BatchDecodeTok: 50, FirstIDs: []int32{1, 2, 3}},
		},
		{
			name:   "skip",
			stdout: `{"skip": "python3 cannot import xllamacpp"}`,
			want:   benchResult{Skip: "python3 cannot import xllamacpp"},
		},
		{name: "script fails", stderr: "Traceback: convert_hf_to_gguf.py failed", code: 1, wantErr: "convert_hf_to_gguf.py failed"},
		{name: "not JSON", stdout: "hello", wantErr: "reading the reference's output"},
		{name: "no speed", stdout: `{"engine": "x"}`, wantErr: "no engine or decode speed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			python, specPath := fakePython(t, tt.stdout, tt.stderr, tt.code)
			spec := benchSpec("/models/m", "bf16", 16, 4, 2, 2, 7, 1000)
			spec["convert"] = "/x/convert_hf_to_gguf.py"
			got, err := runBenchScript(python, benchModelLlamacppScript, spec)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(tt.want)
			if string(gj) != string(wj) {
				t.Errorf("result %s, want %s", gj, wj)
			}
			// The script saw the same prompts benchOurs uses.
			raw, err := os.ReadFile(specPath)
			if err != nil {
				t.Fatal(err)
			}
			var seen struct {
				Model, Dtype, Convert string
				Threads, Decode       int
				Prompts               [][]int32
			}
			if err := json.Unmarshal(raw, &seen); err != nil {
				t.Fatalf("spec %s: %v", raw, err)
			}
			if seen.Model != "/models/m" || seen.Dtype != "bf16" || seen.Convert != "/x/convert_hf_to_gguf.py" || seen.Threads != 2 || seen.Decode != 4 {
				t.Errorf("spec %s", raw)
			}
			if len(seen.Prompts) != 3 || len(seen.Prompts[0]) != 16 || seen.Prompts[0][5] != benchPrompt(7, 16, 1000)[5] {
				t.Errorf("prompts %v, want 1+2 prompts of 16 ids from benchPrompt", seen.Prompts)
			}
		})
	}
}

func TestWriteBenchTable(t *testing.T) {
	results := []benchResult{
		{Engine: "clawrl", PrefillTokS: 200, DecodeTokS: 30, BatchDecodeTok: 90, FirstIDs: []int32{5, 6, 7, 8}},
		{Engine: "transformers 5.23.0 torch 2.15.0", PrefillTokS: 100, DecodeTokS: 10, BatchDecodeTok: 30},
		{Engine: "llama.cpp (xllamacpp 2026.10.11549)", PrefillTokS: 400, DecodeTokS: 20, BatchDecodeTok: 45, FirstIDs: []int32{5, 6, 9}},
	}
	var b strings.Builder
	writeBenchTable(&b, 128, 4, 60, results)
	out := b.String()
	for _, want := range []string{
		"prefill 128 tok/s", "decode×4 tok/s", "50%",
		"clawrl ÷ transformers  ", "2.00x", "3.00x",
		"clawrl ÷ llama.cpp", "0.50x", "1.50x", "2.00x",
		"greedy ids, clawrl vs llama.cpp: first 2 of 3 agree ([5 6 7] vs [5 6 9])",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "clawrl vs transformers") {
		t.Errorf("greedy line for an engine without ids:\n%s", out)
	}
	// Ours alone: no ratio rows.
	b.Reset()
	writeBenchTable(&b, 128, 4, 60, results[:1])
	if strings.Contains(b.String(), "÷ ") && strings.Contains(b.String(), "x ") {
		t.Errorf("ratio row with one engine:\n%s", b.String())
	}
}

func FuzzParseBenchResult(f *testing.F) {
	f.Add([]byte(`{"engine": "e", "decode_tok_s": 1, "first_ids": [1]}`))
	f.Add([]byte(`{"skip": "no module"}`))
	f.Add([]byte(`{"first_ids": [1e99]}`))
	f.Add([]byte("nope"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := parseBenchResult(data)
		if err == nil && r.Skip == "" && (r.Engine == "" || r.DecodeTokS <= 0) {
			t.Errorf("accepted %q without an engine and a decode speed", data)
		}
	})
}

// TestLlamacppGreedyIDs runs the real llama.cpp script on a tiny random
// Qwen3 and checks its greedy ids match ours. llama.cpp is an optional,
// manually installed reference (see bench_model_llamacpp.py), not one of
// CI's, so this skips unless CLAWRL_LLAMACPP_PYTHON and
// CLAWRL_LLAMACPP_CONVERT name the interpreter and the converter.
func TestLlamacppGreedyIDs(t *testing.T) {
	python, convert := os.Getenv("CLAWRL_LLAMACPP_PYTHON"), os.Getenv("CLAWRL_LLAMACPP_CONVERT")
	if python == "" || convert == "" {
		t.Skip("set CLAWRL_LLAMACPP_PYTHON and CLAWRL_LLAMACPP_CONVERT to compare with llama.cpp")
	}
	dir := t.TempDir()
	cfg, err := model.NewConfig(model.Qwen3, model.SizeTiny)
	if err != nil {
		t.Fatal(err)
	}
	if err := model.WriteRandom(dir, cfg, 3, safetensors.F32); err != nil {
		t.Fatal(err)
	}
	if err := writeTokenizer(dir, model.Qwen3, ""); err != nil {
		t.Fatal(err)
	}
	m, err := model.LoadWith(dir, model.Options{WeightDType: "f32"})
	if err != nil {
		t.Fatal(err)
	}
	const prompt, decode, seed = 32, 8, 3
	ours, err := benchOurs(m, prompt, decode, 1, seed)
	if err != nil {
		t.Fatal(err)
	}
	spec := benchSpec(dir, "f32", prompt, decode, 1, 2, seed, cfg.VocabSize)
	spec["convert"] = convert
	ref, err := runBenchScript(python, benchModelLlamacppScript, spec)
	if err != nil {
		t.Fatal(err)
	}
	if ref.Skip != "" {
		t.Fatalf("llama.cpp skipped: %s", ref.Skip)
	}
	if len(ref.FirstIDs) == 0 || len(ours.FirstIDs) < len(ref.FirstIDs) {
		t.Fatalf("ids: ours %v, llama.cpp %v", ours.FirstIDs, ref.FirstIDs)
	}
	for i, id := range ref.FirstIDs {
		if ours.FirstIDs[i] != id {
			t.Fatalf("greedy ids differ at %d: ours %v, llama.cpp %v", i, ours.FirstIDs, ref.FirstIDs)
		}
	}
}
