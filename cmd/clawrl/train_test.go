package main

import (
	"bytes"
	"context"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawrl/clawrl/model"
	"github.com/clawrl/clawrl/safetensors"
	"github.com/clawrl/clawrl/tokenizer"
	"github.com/clawrl/clawrl/tokenizer/vocab"
	"github.com/clawrl/clawrl/train"
)

func TestParseSFTLine(t *testing.T) {
	cases := []struct {
		name, line string
		bad        bool
	}{
		{"chat", `{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"yo"}]}`, false},
		{"ids", `{"prompt_ids":[1,2],"completion_ids":[3]}`, false},
		{"no assistant", `{"messages":[{"role":"user","content":"hi"}]}`, true},
		{"both", `{"messages":[{"role":"assistant","content":"x"}],"prompt_ids":[1],"completion_ids":[2]}`, true},
		{"empty completion", `{"prompt_ids":[1],"completion_ids":[]}`, true},
		{"negative id", `{"prompt_ids":[-1],"completion_ids":[2]}`, true},
		{"trailing", `{"prompt_ids":[1],"completion_ids":[2]} {}`, true},
		{"not json", `prompt`, true},
		{"chat with tools", `{"messages":[{"role":"user","content":"ls"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"ls","arguments":"{}"}}]}],"tools":[{"type":"function","function":{"name":"ls","parameters":{"type":"object"}}}]}`, false},
		{"tools without chat", `{"prompt_ids":[1],"completion_ids":[2],"tools":[{"type":"function","function":{"name":"ls"}}]}`, true},
		{"tool without name", `{"messages":[{"role":"assistant","content":"x"}],"tools":[{"type":"function","function":{}}]}`, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := parseSFTLine([]byte(c.line)); (err != nil) != c.bad {
				t.Fatalf("err = %v, want error %v", err, c.bad)
			}
		})
	}
}

func FuzzParseSFTLine(f *testing.F) {
	f.Add([]byte(`{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"yo"}]}`))
	f.Add([]byte(`{"prompt_ids":[1,2],"completion_ids":[3]}`))
	f.Add([]byte(`{"messages":[{"role":"assistant","content":"x"}],"tools":[{"type":"function","function":{"name":"ls"}}]}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		l, err := parseSFTLine(line)
		if err != nil {
			return
		}
		if l.Messages == nil && (len(l.PromptIDs) == 0 || len(l.CompletionIDs) == 0) {
			t.Fatalf("accepted a record with nothing to train on: %s", line)
		}
		if l.Tools != nil && l.Messages == nil {
			t.Fatalf("accepted tools without a chat: %s", line)
		}
	})
}

// TestTrainSFT runs the command on pre-tokenised data with a tiny random
// model, resumes from its output, and loads the adapter with the model's
// PEFT loader. (Chats need a real tokenizer.json; see the report.)
func TestTrainSFT(t *testing.T) {
	dir := t.TempDir()
	cfg, err := model.NewConfig(model.Qwen3, model.SizeTiny)
	if err != nil {
		t.Fatal(err)
	}
	cfg.VocabSize = 256
	mdir := filepath.Join(dir, "model")
	if err := model.WriteRandom(mdir, cfg, 1, safetensors.F32); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data.jsonl")
	lines := `{"prompt_ids":[1,2,3],"completion_ids":[4,5,6]}
{"prompt_ids":[7,8],"completion_ids":[9,10,11,12]}
`
	if err := os.WriteFile(data, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	var buf bytes.Buffer
	f := sftFlags{modelDir: mdir, data: data, out: out, mode: "lora", rank: 4, alpha: 8, lr: 1e-2,
		maxGradNorm: 1, epochs: 3, batch: 2, microTokens: 2048}
	if err := runSFT(context.Background(), f, &buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "saved to") {
		t.Fatalf("output: %s", buf.String())
	}
	f.resume, f.epochs = out, 1
	buf.Reset()
	if err := runSFT(context.Background(), f, &buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "step 4:") {
		t.Fatalf("resumed run should continue at step 4: %s", buf.String())
	}
	// Numbers that would train nonsense are refused before a step: by the
	// trainer (train.New) whatever the caller, and on the command line by
	// name (checkNumberFlags, below).
	for _, c := range []struct {
		edit func(*sftFlags)
		want string
	}{
		{func(f *sftFlags) { f.alpha = math.NaN() }, "LoRA alpha"},
		{func(f *sftFlags) { f.maxGradNorm = math.Inf(1) }, "max gradient norm"},
	} {
		bad := f
		bad.resume, bad.out = "", filepath.Join(dir, "bad")
		c.edit(&bad)
		err := runSFT(context.Background(), bad, io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("runSFT with a bad %s: %v", c.want, err)
		}
		if _, serr := os.Stat(bad.out); serr == nil {
			t.Errorf("runSFT with a bad %s wrote %s", c.want, bad.out)
		}
	}
	for _, bad := range [][]string{{"--lr", "nan"}, {"--lr", "-1"}, {"--micro-batch-tokens", "-1"}} {
		args := append([]string{"train", "sft", "--model", mdir, "--data", data, "--out", filepath.Join(dir, "bad-cli")}, bad...)
		if _, err := runCLI(t, args...); err == nil || !strings.Contains(err.Error(), bad[0]) {
			t.Errorf("train sft %v: %v, want it refused by name", bad, err)
		}
	}
	m, err := model.Load(mdir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.LoadAdapter(out); err != nil {
		t.Fatal(err)
	}
	w, err := train.FromModel(m, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := train.LoadAdapter(w, out); err != nil {
		t.Fatal(err)
	}
}

// TestTrainSFTChats trains on chats rendered with the real Qwen3 template and
// tokenizer (embedded by tokenizer/vocab) and checks how a chat splits into
// sequences: one per assistant message, each response ending with the
// template's end-of-turn token.
func TestTrainSFTChats(t *testing.T) {
	lines := `{"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Capital of France?"},{"role":"assistant","content":"Paris."},{"role":"user","content":"And Italy?"},{"role":"assistant","content":"Rome."}]}
`
	fx := newChatFixture(t, model.Qwen3, "qwen3", lines)
	seqs, tok := fx.seqs, fx.tok
	for i, want := range []string{"Paris.", "Rome."} {
		prompt, resp := tok.Decode(seqs[i].PromptIDs), tok.Decode(seqs[i].ResponseIDs)
		if !strings.HasSuffix(prompt, "<|im_start|>assistant\n") || !strings.Contains(resp, want) || !strings.HasPrefix(strings.TrimPrefix(resp, "<think>\n\n</think>\n\n"), want) {
			t.Errorf("sequence %d: prompt ends %q, response %q", i, prompt[max(0, len(prompt)-30):], resp)
		}
		if !strings.Contains(resp, "<|im_end|>") {
			t.Errorf("sequence %d: response %q lacks the end-of-turn token", i, resp)
		}
	}
	fx.train(t)
}

// TestTrainSFTChatWithTools trains on an OpenAI-shaped tool round: the
// prompts carry the tools as serve renders them, the tool call is trained
// as the template writes it (Qwen3's <tool_call> with the arguments as
// sent; Llama 3.1's JSON with them as an object, not a quoted string), and
// the answer after the tool result too.
func TestTrainSFTChatWithTools(t *testing.T) {
	for _, tc := range []struct {
		fam             model.Family
		vocab           string
		toolsIn, callIn []string
	}{
		{model.Qwen3, "qwen3", []string{"<tools>", `"name": "ls"`}, []string{"<tool_call>", `"name": "ls"`, `"path": "."`}},
		{model.Llama, "llama", []string{`"name": "ls"`, "List a folder"}, []string{`"name": "ls"`, `"parameters": {"path": "."}`}},
	} {
		t.Run(tc.vocab, func(t *testing.T) {
			line := `{"messages":[{"role":"user","content":"What is here?"},` +
				`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"ls","arguments":"{\"path\": \".\"}"}}]},` +
				`{"role":"tool","tool_call_id":"c1","content":"notes.txt"},{"role":"assistant","content":"One file: notes.txt."}],` +
				`"tools":[{"type":"function","function":{"name":"ls","description":"List a folder","parameters":{"type":"object","properties":{"path":{"type":"string"}}}}}]}` + "\n"
			fx := newChatFixture(t, tc.fam, tc.vocab, line)
			seqs, tok := fx.seqs, fx.tok
			for i, s := range seqs {
				prompt := tok.Decode(s.PromptIDs)
				for _, want := range tc.toolsIn {
					if !strings.Contains(prompt, want) {
						t.Errorf("sequence %d: the prompt lacks the tools (%q): %q", i, want, prompt[:min(len(prompt), 400)])
					}
				}
			}
			call, answer := tok.Decode(seqs[0].ResponseIDs), tok.Decode(seqs[1].ResponseIDs)
			for _, want := range tc.callIn {
				if !strings.Contains(call, want) {
					t.Errorf("first response %q is not the ls call (lacks %q)", call, want)
				}
			}
			if !strings.Contains(tok.Decode(seqs[1].PromptIDs), "notes.txt") || !strings.Contains(answer, "One file: notes.txt.") {
				t.Errorf("second sequence: prompt lacks the tool result or response %q lacks the answer", answer)
			}
			fx.train(t)
		})
	}
}

// chatFixture is a random tiny checkpoint of a family with its real
// tokenizer and template, a JSONL file of chats, and the training sequences
// readSFTData made of them (two per file: the tests' chats have two
// assistant messages).
type chatFixture struct {
	dir, model, data string
	seqs             []train.Sequence
	tok              *tokenizer.Tokenizer
}

func newChatFixture(t *testing.T, fam model.Family, vocabName, jsonl string) chatFixture {
	t.Helper()
	fx := chatFixture{dir: t.TempDir()}
	cfg, err := model.NewConfig(fam, model.SizeTiny)
	if err != nil {
		t.Fatal(err)
	}
	fx.model = filepath.Join(fx.dir, "model")
	if err := model.WriteRandom(fx.model, cfg, 1, safetensors.F32); err != nil {
		t.Fatal(err)
	}
	if err := vocab.Write(vocabName, fx.model); err != nil {
		t.Fatal(err)
	}
	fx.data = filepath.Join(fx.dir, "chats.jsonl")
	if err := os.WriteFile(fx.data, []byte(jsonl), 0o644); err != nil {
		t.Fatal(err)
	}
	if fx.seqs, err = readSFTData(fx.data, fx.model, cfg.VocabSize); err != nil {
		t.Fatal(err)
	}
	if len(fx.seqs) != 2 {
		t.Fatalf("%d sequences, want one per assistant message (2)", len(fx.seqs))
	}
	if fx.tok, err = tokenizer.Load(filepath.Join(fx.model, "tokenizer.json")); err != nil {
		t.Fatal(err)
	}
	return fx
}

// train runs `clawrl train sft` (LoRA, one epoch) on the fixture's chats.
func (fx chatFixture) train(t *testing.T) {
	t.Helper()
	var buf bytes.Buffer
	f := sftFlags{modelDir: fx.model, data: fx.data, out: filepath.Join(fx.dir, "out"), mode: "lora", rank: 4, alpha: 8,
		lr: 1e-3, maxGradNorm: 1, epochs: 1, batch: 2, microTokens: 2048}
	if err := runSFT(context.Background(), f, &buf); err != nil {
		t.Fatal(err)
	}
}
