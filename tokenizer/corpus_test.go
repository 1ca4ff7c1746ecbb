package tokenizer_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The parity corpus is generated, not stored: a fixed seed makes it the same
// on every run and machine. Each generator covers one kind of text that has
// broken tokenizers before.

const corpusSeed = 20261121

var (
	words = strings.Fields(`the quick brown fox jumps over lazy dog and then it runs
		away from a big angry farmer who shouts loudly at everyone while the sun sets
		tokenizer model training reward policy gradient session turn assistant user
		system tool call result error value function return import package struct
		Hello World OpenClaw clawrl Qwen Llama HTTP JSON API GPU CPU don't can't
		I'm you're we've they'll she'd it's O'Brien rock'n'roll naïve café résumé
		Straße façade coöperate jalapeño über Ελληνικά русский язык עברית العربية
		हिन्दी বাংলা ไทย Tiếng Việt 한국어 日本語 中文 Ünïcödé`)
	cjk = []string{"你好，世界！", "我们今天去公园散步吧。", "机器学习是人工智能的一个分支",
		"東京は日本の首都です。", "ひらがなとカタカナ", "私は学生です", "안녕하세요 세계",
		"대한민국의 수도는 서울입니다", "中文字符串没有空格所以整段是一个词", "繁體中文與簡體中文",
		"（全角括号）【方括号】「引号」", "１２３４５６７８９０", "ｆｕｌｌｗｉｄｔｈ"}
	emoji = []string{"😀", "👍", "👍🏽", "🇩🇪", "🇯🇵", "👨‍👩‍👧‍👦", "🏳️‍🌈", "❤️", "✨", "🤖",
		"🦀", "☕", "1️⃣", "#️⃣", "🧑🏿‍💻", "🫠", "©", "™", "↔️", "⚠️"}
	marks = []string{"e\u0301", "a\u0308", "o\u0302\u0323", "q\u0301", "n\u0303",
		"\u1100\u1161\u11a8", "A\u030a", "\u0915\u094d\u0937", "x\u0332\u0336",
		"Z\u0351\u0352\u0353\u0354", "\u212b", "\u2126", "\ufb01", "e\u0301\u0301",
		"\u0041\u0300\u0316", "i\u0307", "\u00c5", "\u0958", "\u2000", "\u0344"}
	numbers = []string{"0", "7", "42", "123", "1234", "12345678901234567890",
		"3.14159", "1,234,567", "-273.15", "1e-9", "0x1F", "v1.2.3", "٣٤٥", "²³",
		"Ⅻ", "½", "१२३", "1st", "2nd", "10km", "99%", "$5.00", "2026-11-21",
		"07:30", "192.168.0.1", "๑๒๓", "⑨", "𝟘𝟙𝟚"}
	specials = []string{"<|im_start|>", "<|im_end|>", "<|endoftext|>", "<think>",
		"</think>", "<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>",
		"<|eot_id|>", "<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>",
		"<|end_header_id|>", "<|vision_start|>", "<|fim_prefix|>", "<|reserved_special_token_5|>",
		"<|im_sta", "<think", "<|eot_id", "</think", "<<|im_end|>>", "<|im_start|><|im_end|>",
		"< think>", "<|IM_START|>", "<|python_tag|>"}
	spaces   = []string{" ", "  ", "   ", "\t", "\t\t", "\n", "\n\n", "\r\n", "\r", " \n", "\n ", "\u00a0", "\u3000", "\u2028", "\v", "\f", "\u0085", "\u2009", "    ", "\t \n"}
	codeBits = []string{
		"func main() {\n\tfmt.Println(\"hi\")\n}\n",
		"def f(x):\n    return x ** 2  # square\n",
		"for (int i = 0; i < n; ++i) {\r\n    sum += a[i];\r\n}\r\n",
		"{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}",
		"if err != nil {\n\t\treturn fmt.Errorf(\"load %s: %w\", path, err)\n\t}\n",
		"SELECT id, name FROM users WHERE age >= 18 ORDER BY name;",
		"$ ls -la /tmp && echo $HOME | grep -v '^#'",
		"<div class=\"x\">&nbsp;</div>",
		"    \n        \n",
		"x := []int{1,2,3}\t// trailing   \n",
		"#!/usr/bin/env bash\nset -euo pipefail\n",
		"a=b;c=d;;e==f!=g<=h>=i->j=>k::l",
		"print(f\"{x!r:>10}\")",
		"/* comment */ // another\n",
		"```python\nimport os\n```\n",
		"        return self._cache[key]\n\n\n",
		"'''docstring'''\n\"\"\"more\"\"\"",
		"@decorator\nclass Foo(Base):\n    pass\n",
	}
)

type corpusGen struct{ r *rand.Rand }

func (g *corpusGen) pick(list []string) string { return list[g.r.IntN(len(list))] }

func (g *corpusGen) sentence(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(g.pick([]string{" ", " ", " ", " ", ", ", ". ", " - ", "; ", "! ", "? ", "\n", "  "}))
		}
		w := g.pick(words)
		switch g.r.IntN(8) {
		case 0:
			w = strings.ToUpper(w)
		case 1:
			r, size := utf8.DecodeRuneInString(w)
			w = string(unicode.ToUpper(r)) + w[size:]
		}
		b.WriteString(w)
	}
	return b.String()
}

// randomRune draws from ranges chosen to hit every class the pre-tokenizer
// distinguishes, including unassigned code points and other scripts.
func (g *corpusGen) randomRune() rune {
	ranges := [][2]rune{
		{0x20, 0x7e}, {0x20, 0x7e}, {0x09, 0x0d}, {0x00, 0x1f}, {0x7f, 0x9f}, {0xa0, 0x24f}, {0x300, 0x36f},
		{0x370, 0x3ff}, {0x400, 0x4ff}, {0x590, 0x6ff}, {0x900, 0x97f}, {0xe00, 0xe7f},
		{0x1100, 0x11ff}, {0x1e00, 0x1eff}, {0x2000, 0x206f}, {0x2070, 0x209f},
		{0x2100, 0x218f}, {0x2190, 0x23ff}, {0x2460, 0x24ff}, {0x2500, 0x27bf},
		{0x3000, 0x303f}, {0x3040, 0x30ff}, {0x4e00, 0x9fff}, {0xac00, 0xd7a3},
		{0xfe00, 0xfe0f}, {0xff00, 0xffef}, {0x1f300, 0x1faff}, {0x10000, 0x1007f},
		{0x1d400, 0x1d7ff}, {0x20000, 0x2a6df}, {0xe0000, 0xe007f}, {0xf0000, 0xf00ff},
	}
	rg := ranges[g.r.IntN(len(ranges))]
	return rg[0] + g.r.Int32N(rg[1]-rg[0]+1)
}

// anyCodePoint draws from all of Unicode (surrogates aside), with runs of
// combining marks: it finds where Unicode versions differ (Go's tables are
// 15.0, Hugging Face normalizes with 9.0 and splits with 16.0).
func (g *corpusGen) anyCodePoint(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		var c rune
		switch g.r.IntN(5) {
		case 0:
			c = g.r.Int32N(0x3000)
		case 1:
			c = g.r.Int32N(0x10000)
		case 2:
			c = g.r.Int32N(0x110000)
		case 3:
			c = []rune{0x300, 0x1dc0, 0x20d0, 0xfe20, 0x1ab0, 0x0591}[g.r.IntN(6)] + g.r.Int32N(48)
		default:
			c = rune(" \t\n'sS1a"[g.r.IntN(8)])
		}
		if c >= 0xd800 && c < 0xe000 {
			c = 'x'
		}
		b.WriteRune(c)
	}
	return b.String()
}

func (g *corpusGen) randomUnicode(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteRune(g.randomRune())
	}
	return b.String()
}

// mixed glues fragments of every kind together.
func (g *corpusGen) mixed(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		switch g.r.IntN(10) {
		case 0:
			b.WriteString(g.pick(cjk))
		case 1:
			b.WriteString(g.pick(emoji))
		case 2:
			b.WriteString(g.pick(marks))
		case 3:
			b.WriteString(g.pick(numbers))
		case 4:
			b.WriteString(g.pick(specials))
		case 5:
			b.WriteString(g.pick(spaces))
		case 6:
			b.WriteString(g.pick(codeBits))
		case 7:
			b.WriteString(g.randomUnicode(1 + g.r.IntN(4)))
		default:
			b.WriteString(g.sentence(1 + g.r.IntN(4)))
		}
	}
	return b.String()
}

func (g *corpusGen) whitespace() string {
	var b strings.Builder
	n := 1 + g.r.IntN(8)
	for i := 0; i < n; i++ {
		for k := g.r.IntN(4); k > 0; k-- {
			b.WriteString(g.pick(spaces))
		}
		if g.r.IntN(3) > 0 {
			b.WriteString(g.pick(words))
		}
		if g.r.IntN(4) == 0 {
			b.WriteString(g.pick(numbers))
		}
		if g.r.IntN(5) == 0 {
			b.WriteString(g.pick([]string{".", "!", "(", ")", "{", "}", "--", "'", "\"", "..."}))
		}
	}
	return b.String()
}

func (g *corpusGen) chatML() string {
	var b strings.Builder
	b.WriteString("<|im_start|>system\n" + g.sentence(5+g.r.IntN(30)) + "<|im_end|>\n")
	for turn := g.r.IntN(4); turn >= 0; turn-- {
		b.WriteString("<|im_start|>user\n" + g.mixed(1+g.r.IntN(4)) + "<|im_end|>\n")
		b.WriteString("<|im_start|>assistant\n")
		if g.r.IntN(2) == 0 {
			b.WriteString("<think>\n" + g.sentence(3+g.r.IntN(12)) + "\n</think>\n\n")
		}
		if g.r.IntN(3) == 0 {
			fmt.Fprintf(&b, "<tool_call>\n{\"name\": %q, \"arguments\": {\"q\": %q, \"n\": %d}}\n</tool_call>",
				g.pick(words), g.sentence(2), g.r.IntN(1000))
			b.WriteString("<|im_end|>\n<|im_start|>user\n<tool_response>\n" + g.mixed(2) + "\n</tool_response><|im_end|>\n")
			continue
		}
		b.WriteString(g.sentence(4+g.r.IntN(20)) + "<|im_end|>\n")
	}
	b.WriteString("<|im_start|>assistant\n")
	return b.String()
}

func (g *corpusGen) llama3Chat() string {
	var b strings.Builder
	b.WriteString("<|begin_of_text|>")
	for _, role := range []string{"system", "user", "assistant", "user"} {
		b.WriteString("<|start_header_id|>" + role + "<|end_header_id|>\n\n" + strings.TrimSpace(g.mixed(1+g.r.IntN(3))) + "<|eot_id|>")
	}
	b.WriteString("<|start_header_id|>assistant<|end_header_id|>\n\n")
	return b.String()
}

// longText exercises words long enough for the heap merge and the cache
// limits: runs of one character, a CJK paragraph, a long identifier.
func (g *corpusGen) longText() string {
	switch g.r.IntN(6) {
	case 0:
		return strings.Repeat(g.pick([]string{"a", "=", " ", "\n", "ab", "-", "0", "你", "😀", "\t"}), 50+g.r.IntN(400))
	case 1:
		var b strings.Builder
		for b.Len() < 600 {
			b.WriteString(g.pick(cjk))
		}
		return b.String()
	case 2:
		var b strings.Builder
		for b.Len() < 400 {
			b.WriteString(g.pick(words))
		}
		return b.String() // one long letters-only word
	default:
		return g.mixed(40 + g.r.IntN(80))
	}
}

// parityCorpus returns n strings: each kind in turn, then a handful of fixed
// edge cases.
func parityCorpus(n int) []string {
	g := &corpusGen{r: rand.New(rand.NewPCG(corpusSeed, 1))}
	out := []string{
		"", " ", "  ", "\n", "a", "Hello world", " Hello", "Hello ", "hello  world", "x \n y",
		"it's", "IT'S", "I'LL", "we'Ve", "'s", "''", "'ſ", "’s", "a'b'c", "don't stop",
		"<|im_start|>", "<|im_start|>user\nhi<|im_end|>", "<think></think>", " <think> ",
		"<|eot_id|><|eot_id|>", "text<|endoftext|>text", "\u00a0\u00a0x", "x\u00a0\u00a0",
		"\r\n\r\n", " \r\n ", "1234567", "١٢٣٤", "e\u0301", "\ufeffbom", "\x00nul\x00",
		"\u200b\u200c\u200d", "a\u0085b", "x\u180ey", "\U0001F600\U0001F600", "  \t  \n\n  \t",
		"a\x1cb\x1d c\x1e\x1f d", "\x00\x01\x7f x", " \x1c\x1c a", "a \u0085 b", "a\u2028\u2029b", "\u00a0", " \u00a0a",
		"x\u200b y", "\ufeff", "x\u1680y \u2007z \u202f w", "ſ's 'ſ", "\u212a'K",
		// Unicode versions: letters and digits new in 16.0 (Egyptian
		// hieroglyph, Garay, outlined digits), marks new since 9.0.
		"x\U00013fde'a", "\U00010d50'b", "1\U0001ccf5\U0001ccf62", "\u2178\u1acb\u1cd4", "a\u0d3b\u0301", "e\u1df6\u0316\u0301",
	}
	kinds := []func() string{
		func() string { return g.sentence(1 + g.r.IntN(30)) },
		func() string { return g.pick(codeBits) + g.pick(codeBits) },
		g.whitespace,
		func() string { return g.pick(cjk) + g.pick(spaces) + g.pick(cjk) },
		func() string { return g.pick(emoji) + g.sentence(2) + g.pick(emoji) + g.pick(emoji) },
		func() string { return g.sentence(1) + g.pick(marks) + g.pick(marks) + g.sentence(1) },
		func() string { return g.pick(numbers) + g.pick(spaces) + g.pick(numbers) + g.pick(numbers) },
		func() string {
			return g.sentence(2) + g.pick(specials) + g.pick(spaces) + g.pick(specials) + g.sentence(1)
		},
		g.chatML,
		g.llama3Chat,
		func() string { return g.randomUnicode(1 + g.r.IntN(40)) },
		func() string { return g.anyCodePoint(1 + g.r.IntN(20)) },
		func() string { return g.mixed(1 + g.r.IntN(12)) },
		g.longText,
	}
	for i := 0; len(out) < n; i++ {
		out = append(out, kinds[i%len(kinds)]())
	}
	for i, s := range out {
		if !utf8.ValidString(s) {
			panic(fmt.Sprintf("parity corpus #%d is not valid UTF-8: %q", i, s))
		}
	}
	return out
}

// conversations returns OpenAI-style chat requests (system prompts, tool
// schemas, tool calls and results, reasoning) for the reference to render
// with each family's real chat template: the text the engine tokenizes.
func conversations(n int) []map[string]any {
	g := &corpusGen{r: rand.New(rand.NewPCG(corpusSeed, 3))}
	tool := func() map[string]any {
		return map[string]any{"type": "function", "function": map[string]any{
			"name": g.pick(words) + "_" + g.pick(words), "description": g.sentence(8),
			"parameters": map[string]any{"type": "object", "properties": map[string]any{
				"path":  map[string]any{"type": "string", "description": g.sentence(4)},
				"limit": map[string]any{"type": "integer"},
			}, "required": []string{"path"}},
		}}
	}
	var out []map[string]any
	for i := 0; i < n; i++ {
		var msgs []map[string]any
		if g.r.IntN(4) > 0 {
			msgs = append(msgs, map[string]any{"role": "system", "content": g.sentence(5 + g.r.IntN(200))})
		}
		for turn := g.r.IntN(3); turn >= 0; turn-- {
			msgs = append(msgs, map[string]any{"role": "user", "content": g.mixed(1 + g.r.IntN(5))})
			switch g.r.IntN(3) {
			case 0:
				id := fmt.Sprintf("call%d", g.r.IntN(1e6))
				msgs = append(msgs,
					map[string]any{"role": "assistant", "content": "", "tool_calls": []any{map[string]any{
						"id": id, "type": "function", "function": map[string]any{
							"name": g.pick(words), "arguments": map[string]any{"path": g.mixed(1), "limit": g.r.IntN(100)}},
					}}},
					map[string]any{"role": "tool", "tool_call_id": id, "content": g.mixed(1 + g.r.IntN(4))})
			case 1:
				msgs = append(msgs, map[string]any{"role": "assistant", "content": g.sentence(3 + g.r.IntN(30)),
					"reasoning_content": g.sentence(3 + g.r.IntN(20))})
			default:
				msgs = append(msgs, map[string]any{"role": "assistant", "content": g.mixed(1 + g.r.IntN(6))})
			}
		}
		msgs = append(msgs, map[string]any{"role": "user", "content": g.mixed(1 + g.r.IntN(3))})
		conv := map[string]any{"messages": msgs, "add_generation_prompt": g.r.IntN(5) > 0}
		if g.r.IntN(2) == 0 {
			var tools []any
			for k := 1 + g.r.IntN(12); k > 0; k-- {
				tools = append(tools, tool())
			}
			conv["tools"] = tools
		}
		if g.r.IntN(3) == 0 {
			conv["enable_thinking"] = g.r.IntN(2) == 0
		}
		out = append(out, conv)
	}
	return out
}
