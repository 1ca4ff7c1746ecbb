// Package scripted is a deterministic engine.Engine for tests only: it is not
// a model and no user-facing mode selects it. It answers from cues written in
// the conversation, so gateway, session and store tests can drive reasoning,
// tool calls, long answers and slow streams without a model:
//
//	[[think:TEXT]]          reasoning TEXT
//	[[say:TEXT]]            content TEXT
//	[[tool:NAME {"a":1}]]   a call of tool NAME with those JSON arguments
//	[[long]]                content that never ends (finish reason "length")
//	[[slow:MS]]             wait MS milliseconds before each token
//	[[again]]               content: the last assistant message, as rendered
//
// Cues are read from the user messages after the last assistant message.
// [[again]] lets a reply to an answer (a revision asked for by the next
// message) say words no message after the answer holds.
// A prompt that already begins the answer (the gateway's forced tool-call
// opening, Format.ToolCallPrefix) is continued from there (continueFrom).
// Without a cue the answer echoes the last user message ("ok: …"); after tool
// results it reports them ("tool said: …"). Token ids are bytes (plus ChatML
// specials); the logprob of token id at position i is a fixed function of
// (i, id), so Score reproduces Generate exactly.
package scripted

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/clawrl/clawrl/engine"
)

// Options configure an Engine.
type Options struct {
	ModelID       string        // default "scripted"
	ContextLength int           // default 32768
	TokenDelay    time.Duration // wait before each token (simulates decoding)
}

// Engine is the scripted engine. It is safe for concurrent use.
type Engine struct {
	opts    Options
	version atomic.Int64
}

var (
	_ engine.Engine    = (*Engine)(nil)
	_ engine.Publisher = (*Engine)(nil)
)

// New returns a scripted engine.
func New(opts Options) *Engine {
	if opts.ModelID == "" {
		opts.ModelID = "scripted"
	}
	if opts.ContextLength <= 0 {
		opts.ContextLength = 32768
	}
	return &Engine{opts: opts}
}

// Info describes the engine.
func (e *Engine) Info() engine.Info {
	return engine.Info{ID: e.opts.ModelID, Family: "chatml", ContextLength: e.opts.ContextLength, Engine: "scripted"}
}

// Format is the byte-level ChatML format.
func (e *Engine) Format() engine.Format { return Format{} }

// Publish records v as the current version; dir is not read (there are no
// weights), which is what a test of the publishing path needs.
func (e *Engine) Publish(_ context.Context, v int64, _ string) error {
	e.version.Store(v)
	return nil
}

// Version is the current policy version.
func (e *Engine) Version() int64 { return e.version.Load() }

func (e *Engine) resolveVersion(adapter string) (int64, error) {
	switch {
	case adapter == engine.AdapterCurrent:
		return e.version.Load(), nil
	case adapter == engine.AdapterBase:
		return 0, nil
	case strings.HasPrefix(adapter, "v"):
		v, err := strconv.ParseInt(adapter[1:], 10, 64)
		if err != nil || v < 0 {
			return 0, fmt.Errorf("scripted: adapter %q: want v<N>", adapter)
		}
		return v, nil
	}
	return 0, fmt.Errorf("scripted: unknown adapter %q", adapter)
}

// logprob is the behaviour logprob of token id at completion position pos:
// a fixed function, so Score can recompute it.
func logprob(pos int, id int32) float32 {
	return -(0.01 + float32((int(id)*7+pos*3)%50)/100)
}

func topLogprobs(pos int, id int32, k int) []engine.TokenLogprob {
	if k <= 0 {
		return nil
	}
	top := make([]engine.TokenLogprob, 0, k)
	lp := logprob(pos, id)
	top = append(top, engine.TokenLogprob{ID: id, Logprob: lp})
	for j := 1; j < k; j++ {
		alt := (id + int32(j)) % vocabSize
		top = append(top, engine.TokenLogprob{ID: alt, Logprob: lp - 0.5*float32(j)})
	}
	return top
}

// Generate plays the script the prompt asks for.
func (e *Engine) Generate(ctx context.Context, req engine.GenerateRequest, emit func(engine.Token) error) (engine.Generation, error) {
	start := time.Now()
	v, err := e.resolveVersion(req.Adapter)
	if err != nil {
		return engine.Generation{}, err
	}
	g := engine.Generation{PolicyVersion: v, PromptTokens: len(req.PromptIDs)}
	prompt, begun := splitBegunTurn(Format{}.Decode(req.PromptIDs))
	sc := parseScript(prompt)
	sc.continueFrom(begun)
	delay := e.opts.TokenDelay
	if sc.delay > 0 {
		delay = sc.delay
	}
	limit := e.opts.ContextLength - len(req.PromptIDs)
	if req.MaxTokens > 0 && req.MaxTokens < limit {
		limit = req.MaxTokens
	}
	g.PrefillNanos = time.Since(start).Nanoseconds()
	decodeStart := time.Now()
	defer func() { g.DecodeNanos = time.Since(decodeStart).Nanoseconds() }()
	var timer *time.Timer
	for pos := 0; ; pos++ {
		id, done := sc.next(pos)
		if done {
			g.FinishReason = engine.FinishStop
			break
		}
		if pos >= limit {
			g.FinishReason = engine.FinishLength
			break
		}
		if err := ctx.Err(); err != nil {
			return g, err
		}
		if delay > 0 {
			if timer == nil {
				timer = time.NewTimer(delay)
				defer timer.Stop()
			} else {
				timer.Reset(delay)
			}
			select {
			case <-ctx.Done():
				return g, ctx.Err()
			case <-timer.C:
			}
		}
		tok := engine.Token{ID: id, Logprob: logprob(pos, id), Top: topLogprobs(pos, id, req.TopLogprobs)}
		g.Tokens = append(g.Tokens, tok)
		if err := emit(tok); err != nil {
			if err == engine.ErrStop {
				g.FinishReason = engine.FinishStop
				g.DecodeNanos = time.Since(decodeStart).Nanoseconds()
				return g, nil
			}
			return g, err
		}
		if id == IDImEnd {
			g.FinishReason = engine.FinishStop
			break
		}
	}
	g.DecodeNanos = time.Since(decodeStart).Nanoseconds()
	return g, nil
}

// Score returns the logprobs Generate would have reported.
func (e *Engine) Score(ctx context.Context, req engine.ScoreRequest) (engine.Scored, error) {
	v, err := e.resolveVersion(req.Adapter)
	if err != nil {
		return engine.Scored{}, err
	}
	if err := ctx.Err(); err != nil {
		return engine.Scored{}, err
	}
	out := engine.Scored{PolicyVersion: v, Logprobs: make([]float32, len(req.CompletionIDs))}
	for i, id := range req.CompletionIDs {
		out.Logprobs[i] = logprob(i, id)
	}
	return out, nil
}

// script is the token sequence an answer consists of.
type script struct {
	ids   []int32 // the whole answer, ending with <|im_end|>, unless endless
	loop  []int32 // repeated forever after ids when endless
	delay time.Duration
	calls []scriptCall // the [[tool:…]] cues, in order
}

type scriptCall struct{ name, args string }

const genPrompt = "<|im_start|>assistant\n"

// splitBegunTurn splits a prompt that already begins the assistant's answer
// (the gateway's forced tool-call opening) into the prompt proper and the
// begun text.
func splitBegunTurn(prompt string) (string, string) {
	i := strings.LastIndex(prompt, genPrompt)
	if i < 0 || strings.Contains(prompt[i:], "<|im_end|>") {
		return prompt, ""
	}
	end := i + len(genPrompt)
	return prompt[:end], prompt[end:]
}

// continueFrom makes the answer continue text the prompt already began. An
// answer that starts with that text continues after it. A forced tool-call
// opening (Format.ToolCallPrefix) continues with the cued calls: the first
// cued call when the opening leaves the name open, the cued call of the
// named function (arguments {} when there is none) when it names one. An
// endless answer, or an opening with no cued call to continue it, follows as
// it is, which is how tests make a model that breaks the forced call.
func (s *script) continueFrom(begun string) {
	if begun == "" || s.loop != nil {
		return
	}
	text := Format{}.Decode(s.ids)
	if rest, ok := strings.CutPrefix(text, begun); ok {
		s.ids = Format{}.Encode(rest)
		return
	}
	rest, ok := strings.CutPrefix(begun, tagToolOpen+`{"name":`)
	if !ok {
		return
	}
	var out strings.Builder
	if rest == "" {
		if len(s.calls) == 0 {
			return
		}
		for i, c := range s.calls {
			nameJSON, _ := json.Marshal(c.name)
			if i == 0 {
				fmt.Fprintf(&out, "%s,%s%s}</tool_call>", nameJSON, argsKey, c.args)
			} else {
				fmt.Fprintf(&out, "<tool_call>{\"name\":%s,\"arguments\":%s}</tool_call>", nameJSON, c.args)
			}
		}
	} else {
		var name string
		if err := json.Unmarshal([]byte(strings.TrimSuffix(rest, ","+argsKey)), &name); err != nil {
			return
		}
		args := "{}"
		for _, c := range s.calls {
			if c.name == name {
				args = c.args
				break
			}
		}
		out.WriteString(args + "}</tool_call>")
	}
	s.ids = append(Format{}.Encode(out.String()), IDImEnd)
}

func (s *script) next(pos int) (int32, bool) {
	if pos < len(s.ids) {
		return s.ids[pos], false
	}
	if len(s.loop) == 0 {
		return 0, true
	}
	return s.loop[(pos-len(s.ids))%len(s.loop)], false
}

// openClawInternalContext opens the metadata block OpenClaw appends as a
// last user message.
const openClawInternalContext = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>"

var cueRE = regexp.MustCompile(`\[\[(think|say|tool|long|slow|again)(?::((?:[^\]]|\][^\]])*))?\]\]`)

// parseScript reads the cues of the turn the prompt asks to answer.
func parseScript(prompt string) *script {
	const asst = genPrompt
	body := strings.TrimSuffix(prompt, asst)
	prev := "" // the last assistant message ([[again]])
	if i := strings.LastIndex(body, asst); i >= 0 {
		body = body[i+len(asst):]
		prev, _, _ = strings.Cut(body, "<|im_end|>")
	}
	var users, tools []string
	for _, block := range strings.Split(body, "<|im_start|>") {
		block = strings.TrimSuffix(strings.TrimRight(block, "\n"), "<|im_end|>")
		switch {
		case strings.HasPrefix(block, "user\n"+openClawInternalContext):
			// OpenClaw's per-request metadata block, not something said.
		case strings.HasPrefix(block, "user\n"):
			users = append(users, block[len("user\n"):])
		case strings.HasPrefix(block, "tool\n"):
			tools = append(tools, block[len("tool\n"):])
		}
	}
	var text strings.Builder
	s := &script{}
	cued := false
	for _, u := range users {
		for _, m := range cueRE.FindAllStringSubmatch(u, -1) {
			cued = true
			switch m[1] {
			case "think":
				fmt.Fprintf(&text, "<think>\n%s\n</think>\n\n", m[2])
			case "say":
				text.WriteString(m[2])
			case "tool":
				name, args, _ := strings.Cut(strings.TrimSpace(m[2]), " ")
				args = strings.TrimSpace(args)
				if args == "" || !json.Valid([]byte(args)) {
					args = "{}"
				}
				nameJSON, _ := json.Marshal(name)
				fmt.Fprintf(&text, "<tool_call>{\"name\":%s,\"arguments\":%s}</tool_call>", nameJSON, args)
				s.calls = append(s.calls, scriptCall{name, args})
			case "again":
				text.WriteString(prev)
			case "long":
				s.loop = Format{}.Encode("la ")
			case "slow":
				if ms, err := strconv.Atoi(strings.TrimSpace(m[2])); err == nil && ms > 0 {
					s.delay = time.Duration(ms) * time.Millisecond
				}
			}
		}
	}
	if !cued || (text.Len() == 0 && s.loop == nil) {
		switch {
		case len(tools) > 0 && len(users) == 0:
			text.WriteString("tool said: " + clip(tools[len(tools)-1]))
		case len(users) > 0:
			text.WriteString("ok: " + clip(cueRE.ReplaceAllString(users[len(users)-1], "")))
		default:
			text.WriteString("ok")
		}
	}
	s.ids = Format{}.Encode(text.String())
	if s.loop == nil {
		s.ids = append(s.ids, IDImEnd)
	}
	return s
}

// clip keeps echoes short and never cuts a rune in half.
func clip(s string) string {
	s = strings.TrimSpace(s)
	const max = 200
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut]
}
