package tokenizer_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/clawrl/clawrl/tokenizer"
	"github.com/clawrl/clawrl/tokenizer/vocab"
)

// benchText is a stand-in for what every OpenClaw turn tokenizes: a ~30k
// character system prompt (markdown sections, rules, JSON tool schemas,
// code), rendered into ChatML with a short conversation.
func benchText() string {
	g := &corpusGen{r: rand.New(rand.NewPCG(corpusSeed, 7))}
	var b strings.Builder
	b.WriteString("<|im_start|>system\nYou are a personal assistant running inside OpenClaw.\n\n")
	for section := 0; b.Len() < 22000; section++ {
		fmt.Fprintf(&b, "## %s\n\n", strings.ToUpper(g.pick(words)[:1])+g.sentence(2))
		for k := 0; k < 4; k++ {
			fmt.Fprintf(&b, "- %s.\n", g.sentence(6+g.r.IntN(14)))
		}
		b.WriteString("\n" + g.sentence(30+g.r.IntN(40)) + ".\n\n")
		if section%3 == 0 {
			b.WriteString("```go\n" + g.pick(codeBits) + g.pick(codeBits) + "```\n\n")
		}
	}
	b.WriteString("# Tools\n\n<tools>\n")
	for tool := 0; tool < 12; tool++ {
		fmt.Fprintf(&b, `{"type": "function", "function": {"name": "%s_%s", "description": "%s.", "parameters": {"type": "object", "properties": {"path": {"type": "string", "description": "%s"}, "limit": {"type": "integer", "minimum": 1, "maximum": 1000}}, "required": ["path"]}}}`+"\n",
			g.pick(words), g.pick(words), g.sentence(12), g.sentence(6))
	}
	b.WriteString("</tools><|im_end|>\n")
	for turn := 0; turn < 3; turn++ {
		b.WriteString("<|im_start|>user\n" + g.mixed(4) + "<|im_end|>\n<|im_start|>assistant\n" + g.sentence(40) + "<|im_end|>\n")
	}
	b.WriteString("<|im_start|>assistant\n")
	return b.String()
}

func benchFamily(b *testing.B, name string) *tokenizer.Tokenizer {
	b.Helper()
	return realTokenizer(b, name).tok
}

// encodeModes are the cache states an encode can meet:
//   - repeat: the same text was encoded before (an agent resending its
//     system prompt and history): served by the segment cache;
//   - warm: new text made of known words (the BPE word cache is warm);
//   - cold: nothing cached.
var encodeModes = []string{"repeat", "warm", "cold"}

func prepareEncode(tok *tokenizer.Tokenizer, mode string) {
	switch mode {
	case "warm":
		tok.ClearSegmentCacheForTest()
	case "cold":
		tok.ClearCacheForTest()
	}
}

func BenchmarkEncode(b *testing.B) {
	text := benchText()
	for _, name := range []string{"qwen3", "llama3"} {
		for _, mode := range encodeModes {
			b.Run(name+"/"+mode, func(b *testing.B) {
				tok := benchFamily(b, name)
				ids := tok.Encode(text)
				b.SetBytes(int64(len(text)))
				b.ResetTimer()
				for b.Loop() {
					prepareEncode(tok, mode)
					ids = tok.AppendEncode(ids[:0], text)
				}
				b.ReportMetric(float64(len(ids))*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
			})
		}
	}
}

func BenchmarkDecode(b *testing.B) {
	tok := benchFamily(b, "qwen3")
	text := benchText()
	ids := tok.Encode(text)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		tok.Decode(ids)
	}
}

func BenchmarkStreamDecoder(b *testing.B) {
	tok := benchFamily(b, "qwen3")
	ids := tok.Encode(benchText())
	b.SetBytes(int64(len(benchText())))
	for b.Loop() {
		d := tok.NewDecoder()
		for _, id := range ids {
			d.Add(id)
		}
		d.Flush()
	}
}

func BenchmarkLoad(b *testing.B) {
	data, _, err := vocab.Files("qwen3")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := tokenizer.FromJSON(data); err != nil {
			b.Fatal(err)
		}
	}
}

// TestBenchmarkVsHF prints encode throughput here and in Hugging Face
// tokenizers on the same text, side by side, with the ratio. It measures;
// it never fails on a clock. Run it with
//
//	CLAWRL_BENCH=1 go test ./tokenizer/ -run TestBenchmarkVsHF -v
func TestBenchmarkVsHF(t *testing.T) {
	if os.Getenv("CLAWRL_BENCH") != "1" {
		t.Skip("set CLAWRL_BENCH=1 to compare encode speed with Hugging Face tokenizers")
	}
	text := benchText()
	for _, name := range []string{"qwen3", "llama3"} {
		f := realTokenizer(t, name)
		for _, mode := range encodeModes {
			res := testing.Benchmark(func(b *testing.B) {
				for b.Loop() {
					prepareEncode(f.tok, mode)
					f.tok.Encode(text)
				}
			})
			goSec := res.T.Seconds() / float64(res.N)
			tokens := len(f.tok.Encode(text))
			var ref struct {
				Iterations int     `json:"iterations"`
				Seconds    float64 `json:"seconds"`
				Tokens     int     `json:"tokens"`
			}
			// Hugging Face has only the word cache: "repeat" and "warm" are
			// the same for it.
			runReference(t, map[string]any{"tokenizer": f.path, "mode": "bench", "text": text, "seconds": 3.0, "cold": mode == "cold"}, &ref)
			hfSec := ref.Seconds / float64(ref.Iterations)
			mb := float64(len(text)) / 1e6
			t.Logf("%-6s %-6s %d chars, %d tokens | Go %7.2f MB/s %9.0f tok/s %6.2f ms | HF tokenizers %7.2f MB/s %9.0f tok/s %6.2f ms | Go/HF speed %.2fx",
				name, mode, len(text), tokens,
				mb/goSec, float64(tokens)/goSec, goSec*1e3,
				mb/hfSec, float64(ref.Tokens)/hfSec, hfSec*1e3,
				hfSec/goSec)
		}
	}
}
