package chatfmt

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/clawrl/clawrl/tokenizer/jinja"
)

// BenchmarkRenderOpenClaw renders an OpenClaw-shaped request (25k-character
// system prompt, 12 tools, tool-call history) with Qwen3's template, and
// reports transformers' and plain jinja2's time for the same render (run once
// in the same process tree) and the ratios.
//
//	go test -run '^$' -bench RenderOpenClaw -benchtime 200x ./tokenizer/chatfmt/
func BenchmarkRenderOpenClaw(b *testing.B) {
	pt := parityTemplates[0] // qwen3
	tmpl := loadParityTemplate(b, pt)
	wireMsgs, wireTools := openclawMessages(25000), openclawTools()
	msgs, tools := fromWire(b, wireMsgs), toolsFromWire(b, wireTools)
	opts := Options{AddGenerationPrompt: true}
	out, err := tmpl.RenderWith(msgs, tools, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(out)))
	b.ResetTimer()
	for range b.N {
		if _, err := tmpl.RenderWith(msgs, tools, opts); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	goNs := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	ref, ok := referenceTiming(b, pt, applyCase{Messages: wireMsgs, Tools: wireTools, AddGenerationPrompt: true})
	if !ok {
		return
	}
	b.ReportMetric(ref.TransformersNs, "transformers-ns/op")
	b.ReportMetric(ref.Jinja2Ns, "jinja2-ns/op")
	b.ReportMetric(ref.TransformersNs/goNs, "x-vs-transformers")
	b.ReportMetric(ref.Jinja2Ns/goNs, "x-vs-jinja2")
}

// BenchmarkParseTemplate measures compiling Qwen3's chat template.
func BenchmarkParseTemplate(b *testing.B) {
	src := string(mustReadB(b, "testdata/qwen3.jinja"))
	for range b.N {
		if _, err := jinja.Parse(src, jinja.HFOptions()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParserToolCall streams a 4 KB tool call through the output
// parser in 4-byte pieces (roughly one token each).
func BenchmarkParserToolCall(b *testing.B) {
	content := bytes.Repeat([]byte("lorem ipsum dolor sit amet, "), 150)
	text := `<think>\nI should write the file.\n</think>\n\n<tool_call>\n{"name": "write", "arguments": {"path": "notes.md", "content": "` + string(content) + `"}}\n</tool_call>`
	b.SetBytes(int64(len(text)))
	for range b.N {
		p := NewParser(ParserOptions{Syntax: SyntaxHermes, NewID: counterIDs()})
		for i := 0; i < len(text); i += 4 {
			p.Add(text[i:min(i+4, len(text))])
		}
		p.Finish()
	}
}

type refTiming struct {
	TransformersNs float64 `json:"transformers_ns"`
	Jinja2Ns       float64 `json:"jinja2_ns"`
	Chars          int     `json:"chars"`
}

// referenceTiming runs testdata/bench_ref.py; without Python it says so and
// reports nothing (a benchmark never fails for a missing reference).
func referenceTiming(b *testing.B, pt parityTemplate, c applyCase) (refTiming, bool) {
	b.Helper()
	py := os.Getenv("CLAWRL_PYTHON")
	if py == "" {
		py = "python3"
	}
	// bench_ref.py runs in testdata, so the config path is relative to it.
	in, err := json.Marshal(map[string]any{"config": pt.config, "cases": []applyCase{c}, "iterations": 30})
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(py, "bench_ref.py")
	cmd.Dir = "testdata"
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		b.Logf("reference timing unavailable (%v): %s", err, strings.TrimSpace(stderr.String()))
		return refTiming{}, false
	}
	var t refTiming
	if err := json.Unmarshal(out, &t); err != nil {
		b.Logf("reference timing output: %v", err)
		return refTiming{}, false
	}
	return t, true
}

func mustReadB(b *testing.B, path string) []byte {
	b.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	return data
}
