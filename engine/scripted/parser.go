package scripted

import (
	"encoding/json"
	"math/rand/v2"
	"strings"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine"
)

type parseState int

const (
	inContent parseState = iota
	inThink
	inToolHeader // after <tool_call>, before "arguments":
	inToolArgs
)

const (
	tagThinkOpen  = "<think>"
	tagThinkClose = "</think>"
	tagToolOpen   = "<tool_call>"
	argsKey       = `"arguments":`
	toolArgsClose = "}</tool_call>"
)

// parser splits the scripted format's output into content, reasoning and
// tool calls, streaming each as soon as no tag can still be forming.
type parser struct {
	state     parseState
	buf       string
	trimLeadN bool // drop newlines that only separate markup from text
	msg       chat.Message
	calls     int
}

func (p *parser) Add(text string) engine.Delta {
	p.buf += text
	var d engine.Delta
	p.step(&d, false)
	return d
}

func (p *parser) Finish() (engine.Delta, chat.Message) {
	var d engine.Delta
	p.step(&d, true)
	switch p.state {
	case inThink:
		p.reason(&d, p.buf)
	case inToolHeader:
		// An unfinished call is not a call: hand its text back as content.
		p.content(&d, tagToolOpen+p.buf)
	case inToolArgs:
		p.args(&d, strings.TrimSuffix(p.buf, "}"))
	default:
		p.content(&d, p.buf)
	}
	p.buf = ""
	p.msg.Role = chat.RoleAssistant
	p.msg.ReasoningContent = strings.TrimRight(p.msg.ReasoningContent, "\n")
	return d, p.msg
}

func (p *parser) content(d *engine.Delta, s string) {
	if p.trimLeadN {
		t := strings.TrimLeft(s, "\n")
		if t == "" {
			return
		}
		p.trimLeadN = false
		s = t
	}
	if s == "" {
		return
	}
	d.Content += s
	p.msg.Content += s
}

func (p *parser) reason(d *engine.Delta, s string) {
	if p.trimLeadN {
		t := strings.TrimLeft(s, "\n")
		if t == "" {
			return
		}
		p.trimLeadN = false
		s = t
	}
	if s == "" {
		return
	}
	d.Reasoning += s
	p.msg.ReasoningContent += s
}

func (p *parser) args(d *engine.Delta, s string) {
	if s == "" {
		return
	}
	i := p.calls - 1
	d.ToolCalls = append(d.ToolCalls, engine.ToolCallDelta{Index: i, Arguments: s})
	p.msg.ToolCalls[i].Function.Arguments += s
}

// step consumes as much of p.buf as can be decided now.
func (p *parser) step(d *engine.Delta, final bool) {
	for {
		switch p.state {
		case inContent:
			i, tag := firstOf(p.buf, tagThinkOpen, tagToolOpen)
			if i < 0 {
				keep := 0
				if !final {
					keep = heldBack(p.buf, tagThinkOpen, tagToolOpen)
				}
				p.content(d, p.buf[:len(p.buf)-keep])
				p.buf = p.buf[len(p.buf)-keep:]
				return
			}
			p.content(d, p.buf[:i])
			p.buf = p.buf[i+len(tag):]
			if tag == tagThinkOpen {
				p.state = inThink
				p.trimLeadN = true
			} else {
				p.state = inToolHeader
			}
		case inThink:
			i := strings.Index(p.buf, tagThinkClose)
			if i < 0 {
				keep := 0
				if !final {
					keep = heldBack(p.buf, tagThinkClose)
					// Trailing newlines may be the separator before </think>.
					keep = len(p.buf) - len(strings.TrimRight(p.buf[:len(p.buf)-keep], "\n"))
				}
				p.reason(d, p.buf[:len(p.buf)-keep])
				p.buf = p.buf[len(p.buf)-keep:]
				return
			}
			p.reason(d, strings.TrimRight(p.buf[:i], "\n"))
			p.buf = p.buf[i+len(tagThinkClose):]
			p.state = inContent
			p.trimLeadN = true
		case inToolHeader:
			i := strings.Index(p.buf, argsKey)
			if i < 0 {
				if j := strings.Index(p.buf, "</tool_call>"); j >= 0 {
					// Malformed call: keep its text as content.
					p.content(d, tagToolOpen+p.buf[:j+len("</tool_call>")])
					p.buf = p.buf[j+len("</tool_call>"):]
					p.state = inContent
					continue
				}
				return
			}
			var head struct {
				Name string `json:"name"`
			}
			if err := json.Unmarshal([]byte(p.buf[:i]+`"_":0}`), &head); err != nil || head.Name == "" {
				p.content(d, tagToolOpen+p.buf[:i+len(argsKey)])
				p.buf = p.buf[i+len(argsKey):]
				p.state = inContent
				continue
			}
			id := newCallID()
			p.msg.ToolCalls = append(p.msg.ToolCalls, chat.ToolCall{ID: id, Type: "function", Function: chat.FunctionCall{Name: head.Name}})
			d.ToolCalls = append(d.ToolCalls, engine.ToolCallDelta{Index: p.calls, ID: id, Name: head.Name})
			p.calls++
			p.buf = strings.TrimLeft(p.buf[i+len(argsKey):], " ")
			p.state = inToolArgs
		case inToolArgs:
			i := strings.Index(p.buf, toolArgsClose)
			if i < 0 {
				keep := 0
				if !final {
					keep = heldBack(p.buf, toolArgsClose)
				}
				p.args(d, p.buf[:len(p.buf)-keep])
				p.buf = p.buf[len(p.buf)-keep:]
				return
			}
			p.args(d, p.buf[:i])
			p.buf = p.buf[i+len(toolArgsClose):]
			p.state = inContent
		}
	}
}

// firstOf returns the earliest position of any of tags in s.
func firstOf(s string, tags ...string) (int, string) {
	best, which := -1, ""
	for _, t := range tags {
		if i := strings.Index(s, t); i >= 0 && (best < 0 || i < best) {
			best, which = i, t
		}
	}
	return best, which
}

// heldBack is the length of the longest suffix of s that is a proper prefix
// of one of tags: text that may still turn out to be markup.
func heldBack(s string, tags ...string) int {
	keep := 0
	for _, t := range tags {
		for n := min(len(t)-1, len(s)); n > keep; n-- {
			if strings.HasSuffix(s, t[:n]) {
				keep = n
				break
			}
		}
	}
	return keep
}

const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// newCallID returns an alphanumeric tool-call id (OpenClaw strips every
// other character, which would break the id's round trip).
func newCallID() string {
	b := make([]byte, 4+20)
	copy(b, "call")
	for i := 4; i < len(b); i++ {
		b[i] = alnum[rand.N(len(alnum))]
	}
	return string(b)
}
