package chatfmt

import (
	"crypto/rand"
	"encoding/json"
	"strings"

	"github.com/clawrl/clawrl/chat"
)

// Syntax is how a model family writes reasoning and tool calls.
type Syntax int

const (
	// SyntaxPlain: everything is content (reasoning tags still recognised).
	SyntaxPlain Syntax = iota
	// SyntaxHermes is Qwen3's (and Qwen2.5's, Hermes'): optional
	// <think>…</think>, then content, then one or more
	// <tool_call>\n{"name": …, "arguments": {…}}\n</tool_call>.
	SyntaxHermes
	// SyntaxLlama3 is Llama 3.1/3.2's JSON tool calling: the whole reply is
	// {"name": …, "parameters": {…}}, possibly after <|python_tag|>, several
	// calls separated by ";".
	SyntaxLlama3
)

// DetectSyntax picks the output syntax a chat template teaches its model.
func DetectSyntax(templateSource string) Syntax {
	switch {
	case strings.Contains(templateSource, "<tool_call>"):
		return SyntaxHermes
	case strings.Contains(templateSource, `"parameters": `) || strings.Contains(templateSource, "<|python_tag|>"):
		return SyntaxLlama3
	}
	return SyntaxPlain
}

// PromptOpensReasoning reports whether a rendered prompt ends inside an open
// <think> block, so generation starts with reasoning (thinking-only
// templates put "<think>\n" in the generation prompt).
func PromptOpensReasoning(prompt string) bool {
	return strings.HasSuffix(strings.TrimRight(prompt, "\n"), "<think>")
}

// ParserOptions configure an output parser.
type ParserOptions struct {
	Syntax Syntax
	// StartInReasoning: the prompt already opened <think>, so text is
	// reasoning until </think>.
	StartInReasoning bool
	// NewID makes tool-call ids; nil makes random ones. Ids must be
	// alphanumeric: OpenClaw strips every other character from them.
	NewID func() string
}

// NewToolCallID returns "call" and 24 random letters and digits.
func NewToolCallID() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	var b [24]byte
	_, _ = rand.Read(b[:])
	out := []byte("call")
	for _, c := range b {
		out = append(out, alphabet[int(c)%len(alphabet)])
	}
	return string(out)
}

const (
	thinkOpen     = "<think>"
	thinkClose    = "</think>"
	toolCallOpen  = "<tool_call>"
	toolCallClose = "</tool_call>"
	pythonTag     = "<|python_tag|>"
)

type parserState int

const (
	stContent parserState = iota
	stReasoning
	stToolCall      // inside <tool_call>, or a Llama JSON call
	stToolCallTail  // after the call's JSON, before </tool_call>
	stToolCallJunk  // the call's JSON broke: looking for </tool_call>
	stLlamaStart    // Llama: deciding whether the reply is a call
	stLlamaBetween  // Llama: after a call, before ";" / the next call
	stLlamaFallback // Llama: plain content from here on
)

// Parser splits streamed assistant text into content, reasoning and tool
// calls. It implements engine.Parser. Whatever chunks the text arrives in,
// the final message is the same, and the deltas add up to it.
type Parser struct {
	opts  ParserOptions
	state parserState
	buf   string // text not yet decided

	msg       chat.Message // role and tool calls; text fields are built below
	content   strings.Builder
	reasoning strings.Builder
	args      []*strings.Builder // per tool call
	delta     chat.Delta

	thinkAllowed  bool // a <think> may still open (nothing else seen yet)
	reasonStarted bool // reasoning text emitted (leading newlines stripped)
	// Trailing newlines held back, counted (a degenerate model may emit
	// thousands; concatenating them would be quadratic).
	reasonPending  int
	contentPending int
	lead           strings.Builder // leading whitespace held while deciding how a reply starts
	stripContentNL bool            // strip newlines at the start of content (after </think>)
	afterCalls     bool            // a tool call has ended; whitespace is dropped
	sawPythonTag   bool            // Llama: <|python_tag|> opened the reply

	call *callParse
}

// callParse is the tool call being read.
type callParse struct {
	raw        []byte // its text after the opening tag (or from "{" for Llama)
	prefix     string // the opening tag, for falling back to content
	scan       jsonScanner
	key        string // the current top-level key
	name       string
	nameKnown  bool
	argsKey    bool // the current value is the arguments
	argsStart  int
	argsDone   bool
	argsEnd    int
	argsString bool // the arguments are a JSON string to decode
	argsSent   int  // raw offset up to which arguments were emitted
	index      int
	emitted    bool // the call's header is out: it can no longer fall back
}

// NewParser returns a parser for one generation.
func NewParser(opts ParserOptions) *Parser {
	p := &Parser{opts: opts, thinkAllowed: true}
	p.msg.Role = chat.RoleAssistant
	switch {
	case opts.StartInReasoning:
		p.state = stReasoning
		p.thinkAllowed = false
	case opts.Syntax == SyntaxLlama3:
		p.state = stLlamaStart
	}
	return p
}

// Add consumes the next piece of generated text.
func (p *Parser) Add(text string) chat.Delta {
	p.buf += text
	p.process(false)
	return p.takeDelta()
}

// Finish ends the stream: held-back text is released, an unfinished tool
// call is closed (or returned to content if it never got a name).
func (p *Parser) Finish() (chat.Delta, chat.Message) {
	p.process(true)
	switch p.state {
	case stToolCall, stToolCallTail, stToolCallJunk:
		p.endCall(true)
	}
	p.emitContent(p.buf)
	p.buf = ""
	if p.contentPending > 0 {
		p.appendContent(strings.Repeat("\n", p.contentPending))
		p.contentPending = 0
	}
	msg := p.msg
	msg.Content = p.content.String()
	msg.ReasoningContent = p.reasoning.String()
	msg.ToolCalls = append([]chat.ToolCall(nil), p.msg.ToolCalls...)
	for i, a := range p.args {
		msg.ToolCalls[i].Function.Arguments = a.String()
	}
	msg.ContentNull = msg.Content == "" && len(msg.ToolCalls) > 0
	return p.takeDelta(), msg
}

func (p *Parser) takeDelta() chat.Delta {
	d := p.delta
	p.delta = chat.Delta{}
	return d
}

func (p *Parser) appendContent(s string) {
	if s == "" {
		return
	}
	p.content.WriteString(s)
	p.delta.Content += s
}

// emitContent releases content text, holding back trailing newlines (they
// are dropped if a tool call follows) and stripping the newlines after
// </think> and the whitespace between tool calls, as the templates do.
func (p *Parser) emitContent(s string) {
	if p.afterCalls {
		s = strings.TrimLeft(s, " \t\r\n")
		if s == "" {
			return
		}
		p.afterCalls = false
		p.stripContentNL = false
	}
	if p.stripContentNL {
		s = strings.TrimLeft(s, "\n")
		if s == "" {
			return
		}
		p.stripContentNL = false
	}
	trimmed := strings.TrimRight(s, "\n")
	if trimmed != "" && p.contentPending > 0 {
		p.appendContent(strings.Repeat("\n", p.contentPending))
		p.contentPending = 0
	}
	p.contentPending += len(s) - len(trimmed)
	p.appendContent(trimmed)
}

// emitReasoning releases reasoning text without its leading and trailing
// newlines (templates render reasoning_content.strip("\n")).
func (p *Parser) emitReasoning(s string) {
	if !p.reasonStarted {
		s = strings.TrimLeft(s, "\n")
		if s == "" {
			return
		}
		p.reasonStarted = true
	}
	trimmed := strings.TrimRight(s, "\n")
	tail := len(s) - len(trimmed)
	if trimmed != "" && p.reasonPending > 0 {
		trimmed = strings.Repeat("\n", p.reasonPending) + trimmed
		p.reasonPending = 0
	}
	p.reasonPending += tail
	if trimmed != "" {
		p.reasoning.WriteString(trimmed)
		p.delta.Reasoning += trimmed
	}
}

// heldPrefix returns the length of the longest suffix of s that is a proper
// prefix of one of tags: text that may still become a tag.
func heldPrefix(s string, tags ...string) int {
	best := 0
	for _, tag := range tags {
		for n := min(len(tag)-1, len(s)); n > best; n-- {
			if strings.HasSuffix(s, tag[:n]) {
				best = n
				break
			}
		}
	}
	return best
}

func (p *Parser) process(final bool) {
	for {
		before := p.state
		progressed := false
		switch p.state {
		case stContent:
			progressed = p.stepContent(final)
		case stReasoning:
			progressed = p.stepReasoning(final)
		case stToolCall:
			progressed = p.stepToolCall()
		case stToolCallTail, stToolCallJunk:
			progressed = p.stepToolCallEnd(final)
		case stLlamaStart:
			progressed = p.stepLlamaStart(final)
		case stLlamaBetween:
			progressed = p.stepLlamaBetween(final)
		case stLlamaFallback:
			p.emitContent(p.buf)
			p.buf = ""
		}
		if !progressed && p.state == before {
			return
		}
	}
}

func (p *Parser) stepContent(final bool) bool {
	if p.thinkAllowed {
		t := strings.TrimLeft(p.buf, " \t\r\n")
		p.lead.WriteString(p.buf[:len(p.buf)-len(t)])
		p.buf = t
		switch {
		case strings.HasPrefix(t, thinkOpen):
			p.lead.Reset() // whitespace before <think> is dropped
			p.buf = t[len(thinkOpen):]
			p.thinkAllowed = false
			p.state = stReasoning
			return true
		case strings.HasPrefix(thinkOpen, t) && !final:
			return false // maybe "<think>" is coming
		}
		p.thinkAllowed = false
		p.buf = p.lead.String() + p.buf
		p.lead.Reset()
	}
	if p.opts.Syntax == SyntaxHermes {
		if i := strings.Index(p.buf, toolCallOpen); i >= 0 {
			p.emitContent(p.buf[:i])
			// One newline separates content from the first call.
			if p.contentPending > 1 {
				p.appendContent(strings.Repeat("\n", p.contentPending-1))
			}
			p.contentPending = 0
			p.buf = p.buf[i+len(toolCallOpen):]
			p.startCall(toolCallOpen)
			return true
		}
	}
	hold := 0
	if !final && p.opts.Syntax == SyntaxHermes {
		hold = heldPrefix(p.buf, toolCallOpen)
	}
	p.emitContent(p.buf[:len(p.buf)-hold])
	p.buf = p.buf[len(p.buf)-hold:]
	return false
}

func (p *Parser) stepReasoning(final bool) bool {
	if i := strings.Index(p.buf, thinkClose); i >= 0 {
		p.emitReasoning(p.buf[:i])
		p.reasonPending = 0
		p.buf = p.buf[i+len(thinkClose):]
		p.state = stContent
		p.thinkAllowed = false
		p.stripContentNL = true
		return true
	}
	hold := 0
	if !final {
		hold = heldPrefix(p.buf, thinkClose)
	}
	p.emitReasoning(p.buf[:len(p.buf)-hold])
	p.buf = p.buf[len(p.buf)-hold:]
	return false
}

func (p *Parser) startCall(prefix string) {
	c := &callParse{prefix: prefix, index: len(p.msg.ToolCalls), argsStart: -1}
	c.scan.onKey = func(start, end int) {
		var k string
		if json.Unmarshal(c.raw[start:end], &k) == nil {
			c.key = k
		}
	}
	c.scan.onValueStart = func(start int) {
		c.argsKey = c.key == "arguments" || c.key == "parameters"
		if c.argsKey && c.argsStart < 0 {
			c.argsStart = start
			c.argsSent = start
			c.argsString = c.raw[start] == '"'
		}
	}
	c.scan.onValueEnd = func(start, end int) {
		switch {
		case c.key == "name" && !c.nameKnown:
			var name string
			if json.Unmarshal(c.raw[start:end], &name) == nil && name != "" {
				c.name, c.nameKnown = name, true
			}
		case c.argsKey && start == c.argsStart:
			c.argsDone, c.argsEnd = true, end
		}
		c.argsKey = false
	}
	p.call = c
	p.state = stToolCall
}

// stepToolCall feeds the call's JSON to the scanner, streaming the name and
// the arguments as soon as they are known and valid.
func (p *Parser) stepToolCall() bool {
	c := p.call
	n := 0
	for n < len(p.buf) && !c.scan.done() {
		c.raw = append(c.raw, p.buf[n])
		err := c.scan.step(p.buf[n])
		n++
		if err != nil || (p.opts.Syntax == SyntaxLlama3 && !p.llamaKeyOK()) {
			p.buf = p.buf[n:]
			p.streamCall()
			p.callBroke()
			return true
		}
		// Announce the call at the byte its name completes, so the outcome
		// does not depend on how the text was chunked.
		if c.nameKnown && !c.emitted {
			p.announce()
		}
	}
	p.buf = p.buf[n:]
	p.streamCall()
	if !c.scan.done() {
		return false
	}
	if !c.nameKnown {
		p.callBroke()
		return true
	}
	if p.opts.Syntax == SyntaxLlama3 {
		p.finishCallArgs()
		p.call = nil
		p.state = stLlamaBetween
		return true
	}
	p.state = stToolCallTail
	return true
}

// streamCall emits the call's header once its name is known, then whatever
// arguments text has been validated since.
func (p *Parser) streamCall() {
	c := p.call
	if !c.emitted {
		return
	}
	if c.argsStart < 0 || c.argsString {
		return
	}
	end := c.scan.pos // validated bytes only
	if c.argsDone {
		end = c.argsEnd
	}
	if end > c.argsSent {
		p.emitArgs(string(c.raw[c.argsSent:end]))
		c.argsSent = end
	}
}

// announce emits the call's index, id and name.
func (p *Parser) announce() {
	c := p.call
	c.emitted = true
	id := NewToolCallID()
	if p.opts.NewID != nil {
		id = p.opts.NewID()
	}
	p.msg.ToolCalls = append(p.msg.ToolCalls, chat.ToolCall{ID: id, Type: "function", Function: chat.FunctionCall{Name: c.name}})
	p.args = append(p.args, &strings.Builder{})
	p.delta.ToolCalls = append(p.delta.ToolCalls, chat.ToolCallDelta{Index: c.index, ID: id, Name: c.name})
}

func (p *Parser) emitArgs(s string) {
	if s == "" {
		return
	}
	c := p.call
	p.args[len(p.args)-1].WriteString(s)
	if n := len(p.delta.ToolCalls); n > 0 && p.delta.ToolCalls[n-1].Index == c.index {
		p.delta.ToolCalls[n-1].Arguments += s
		return
	}
	p.delta.ToolCalls = append(p.delta.ToolCalls, chat.ToolCallDelta{Index: c.index, Arguments: s})
}

// callBroke handles JSON that cannot be a tool call: before the call was
// announced its text goes back to content; after, the call keeps what was
// streamed and the rest of the text becomes content. Hermes calls then skip
// to </tool_call>.
func (p *Parser) callBroke() {
	if p.opts.Syntax == SyntaxLlama3 {
		p.endCall(false)
		p.state = stLlamaFallback
		return
	}
	p.state = stToolCallJunk
}

// finishCallArgs completes the current call's arguments at its end.
func (p *Parser) finishCallArgs() {
	c := p.call
	if !c.emitted {
		return
	}
	switch {
	case c.argsStart < 0:
		p.emitArgs("{}")
	case c.argsString && c.argsDone:
		var s string
		if json.Unmarshal(c.raw[c.argsStart:c.argsEnd], &s) == nil {
			p.emitArgs(s)
		} else {
			p.emitArgs(string(c.raw[c.argsStart:c.argsEnd]))
		}
	case c.argsString:
		p.emitArgs(string(c.raw[c.argsStart:c.scan.pos]))
	}
	p.afterCalls = true
}

// stepToolCallEnd looks for </tool_call> after the call's JSON.
func (p *Parser) stepToolCallEnd(final bool) bool {
	c := p.call
	i := strings.Index(p.buf, toolCallClose)
	if i < 0 {
		if !final {
			hold := heldPrefix(p.buf, toolCallClose)
			c.raw = append(c.raw, p.buf[:len(p.buf)-hold]...)
			p.buf = p.buf[len(p.buf)-hold:]
			return false
		}
		return false
	}
	c.raw = append(c.raw, p.buf[:i]...)
	p.buf = p.buf[i+len(toolCallClose):]
	p.endCall(false)
	return true
}

// endCall closes the current call: at </tool_call>, when its JSON broke, or
// at the end of the stream.
func (p *Parser) endCall(truncated bool) {
	c := p.call
	if c == nil {
		return
	}
	if p.opts.Syntax == SyntaxLlama3 {
		p.state = stLlamaFallback
	} else {
		p.state = stContent
	}
	if !c.emitted {
		p.call = nil
		text := c.prefix + string(c.raw)
		switch {
		case p.opts.Syntax == SyntaxLlama3:
			text += p.buf
			p.buf = ""
		case !truncated:
			text += toolCallClose
		}
		p.emitContent(text)
		return
	}
	p.finishCallArgs()
	p.call = nil
	// Whatever follows the JSON (or the point where it broke) is content.
	rest := string(c.raw[min(c.scan.pos, len(c.raw)):])
	p.afterCalls = true
	p.emitContent(rest)
	p.afterCalls = true
}

// stepLlamaStart decides whether a Llama reply is a tool call: it must start
// (after whitespace and an optional <|python_tag|>) with a JSON object whose
// keys are those of a call.
func (p *Parser) stepLlamaStart(final bool) bool {
	// Leading whitespace (and the tag) move to p.lead, so a long run of
	// whitespace is not rescanned on every Add.
	t := strings.TrimLeft(p.buf, " \t\r\n")
	p.lead.WriteString(p.buf[:len(p.buf)-len(t)])
	p.buf = t
	if !p.sawPythonTag {
		if strings.HasPrefix(t, pythonTag) {
			p.sawPythonTag = true
			p.lead.WriteString(pythonTag)
			p.buf = t[len(pythonTag):]
			return true
		}
		if strings.HasPrefix(pythonTag, t) && t != "" && !final {
			return false
		}
	}
	if t == "" && !final {
		return false
	}
	prefix := p.lead.String()
	p.lead.Reset()
	if !strings.HasPrefix(t, "{") {
		p.buf = prefix + t
		p.state = stLlamaFallback
		return true
	}
	// Hold everything until the call is announced or proven not a call.
	p.startCall(prefix)
	return true
}

func (p *Parser) stepLlamaBetween(final bool) bool {
	t := strings.TrimLeft(p.buf, " \t\r\n;")
	if t == "" {
		if final {
			p.buf = ""
		}
		return false
	}
	if strings.HasPrefix(t, "{") {
		p.buf = t
		p.startCall("")
		return true
	}
	p.buf = t
	p.afterCalls = true
	p.state = stLlamaFallback
	return true
}

// llamaKeyOK reports whether the keys seen so far can belong to a Llama
// call; a reply like {"answer": 4} is content, not a call.
func (p *Parser) llamaKeyOK() bool {
	c := p.call
	switch c.key {
	case "", "name", "parameters", "arguments", "type":
		return true
	}
	return c.emitted
}

// NewParser returns an output parser for a generation that continues
// prompt (rendered by t): the syntax the template teaches, starting inside
// reasoning when the prompt left a <think> open.
func (t *Template) NewParser(prompt string) *Parser {
	return NewParser(ParserOptions{Syntax: DetectSyntax(t.source), StartInReasoning: PromptOpensReasoning(prompt)})
}
