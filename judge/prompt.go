package judge

import (
	"fmt"
	"strings"

	"github.com/clawrl/clawrl/chat"
)

// Input is everything the judge looks at for one turn.
type Input struct {
	TurnID    string
	SessionID string
	// Messages is the request the assistant answered (the task and its
	// context); Response is what the assistant returned.
	Messages []chat.Message
	Response chat.Message
	// Next is what followed (the user's reply or tool results) and NextKind
	// its role (store.NextUser, NextTool, NextFeedback).
	Next     []chat.Message
	NextKind string
	// FeedbackRating (+1, −1, 0 = none) and FeedbackText come from
	// /v1/feedback, the strongest evidence there is.
	FeedbackRating int
	FeedbackText   string
}

// Limits of the compact context view. OpenClaw's system prompt alone is
// 22–40k characters; the judge needs the request, not the whole transcript.
const (
	maxRequestChars = 4000
	maxContextChars = 300
	maxContextMsgs  = 8
	maxOutputChars  = 6000
	maxNextChars    = 4000
)

const evalSystem = `You are a strict reviewer of an AI assistant's work. You see the task the assistant was given, what it answered, and what happened next: the user's reply, the result of a tool it called, or feedback the user gave explicitly.

Judge the assistant's answer by what happened next:
- The next state shows the answer served the task (the user moves on, thanks it, builds on it; a tool call succeeded and was the right call): score 1.
- The next state shows the answer failed (the user corrects it, repeats or rephrases the request, complains; a tool call failed or was the wrong call): score -1.
- The next state says nothing either way: score 0.
Explicit feedback from the user outweighs everything else.

Reason briefly, then end with your score as \boxed{1}, \boxed{0} or \boxed{-1}.`

const hintSystem = `You review an AI assistant's answer in hindsight. You see the task, the assistant's answer, and what happened next: the user's reply, a tool result, or explicit feedback.

Decide whether the next state reveals something the assistant should have known or done differently — a correction, a preference, a missing fact, a better approach. If it does, write a hint of one to three sentences that would have let the assistant give the better answer from the start. Write it as advice to the assistant, not as a reply to the user, between ` + HintStart + ` and ` + HintEnd + `, and end with \boxed{1}.
If the next state adds nothing useful (plain approval, small talk, an unrelated new request), write no hint and end with \boxed{-1}.`

// EvalPrompt is the conversation sent to the judge for a score vote.
func EvalPrompt(in Input) []chat.Message {
	return []chat.Message{
		{Role: chat.RoleSystem, Content: evalSystem},
		{Role: chat.RoleUser, Content: caseText(in) + "\nWas the assistant's answer good? End with \\boxed{1}, \\boxed{0} or \\boxed{-1}."},
	}
}

// HintPrompt is the conversation sent to the judge for a hindsight vote.
func HintPrompt(in Input) []chat.Message {
	return []chat.Message{
		{Role: chat.RoleSystem, Content: hintSystem},
		{Role: chat.RoleUser, Content: caseText(in) + "\nDoes the next state reveal a better answer? If so write the hint between " + HintStart + " and " + HintEnd + " and end with \\boxed{1}; otherwise end with \\boxed{-1}."},
	}
}

// caseText lays out task, answer and next state in labelled sections.
func caseText(in Input) string {
	var b strings.Builder
	req, ctxMsgs := splitRequest(in.Messages)
	if len(ctxMsgs) > 0 {
		b.WriteString("## Context (earlier messages, shortened)\n")
		for _, m := range ctxMsgs {
			fmt.Fprintf(&b, "- %s\n", oneLine(m, maxContextChars))
		}
		b.WriteString("\n")
	}
	b.WriteString("## Task (the user's last request)\n")
	if req == "" {
		b.WriteString("(no user message)\n")
	} else {
		b.WriteString(clip(req, maxRequestChars) + "\n")
	}
	b.WriteString("\n## The assistant's answer\n")
	b.WriteString(clip(messageText(in.Response), maxOutputChars) + "\n")
	b.WriteString("\n## What happened next\n")
	wrote := false
	for _, m := range in.Next {
		fmt.Fprintf(&b, "%s:\n%s\n", nextRole(m, in.NextKind), clip(messageText(m), maxNextChars))
		wrote = true
	}
	if in.FeedbackRating != 0 || in.FeedbackText != "" {
		b.WriteString("Explicit feedback from the user:")
		switch in.FeedbackRating {
		case 1:
			b.WriteString(" thumbs up (the answer was good).")
		case -1:
			b.WriteString(" thumbs down (the answer was bad).")
		}
		if in.FeedbackText != "" {
			b.WriteString(" They wrote: " + clip(in.FeedbackText, maxNextChars))
		}
		b.WriteString("\n")
		wrote = true
	}
	if !wrote {
		b.WriteString("(nothing)\n")
	}
	return b.String()
}

// splitRequest returns the last user message's text and a compact view of
// the messages before it (the system prompt and at most maxContextMsgs of
// the latest ones).
func splitRequest(msgs []chat.Message) (string, []chat.Message) {
	last := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == chat.RoleUser {
			last = i
			break
		}
	}
	if last < 0 {
		return "", tail(msgs, maxContextMsgs)
	}
	before := msgs[:last]
	var out []chat.Message
	if len(before) > 0 && (before[0].Role == chat.RoleSystem || before[0].Role == chat.RoleDeveloper) {
		out = append(out, before[0])
		before = before[1:]
	}
	out = append(out, tail(before, maxContextMsgs)...)
	// Messages after the last user message (tool rounds of this turn) are
	// part of the task the answer continues.
	out = append(out, msgs[last+1:]...)
	return msgs[last].Content, out
}

func tail(msgs []chat.Message, n int) []chat.Message {
	if len(msgs) > n {
		return msgs[len(msgs)-n:]
	}
	return msgs
}

func nextRole(m chat.Message, kind string) string {
	switch {
	case m.Role == chat.RoleTool || kind == "tool":
		return "Tool result"
	case kind == "feedback":
		return "Explicit feedback from the user"
	case m.Role == chat.RoleUser:
		return "The user replied"
	}
	return "Next message (" + m.Role + ")"
}

// messageText is a message's content followed by its tool calls.
func messageText(m chat.Message) string {
	var b strings.Builder
	b.WriteString(m.Content)
	for _, tc := range m.ToolCalls {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "[tool call] %s(%s)", tc.Function.Name, tc.Function.Arguments)
	}
	if b.Len() == 0 {
		return "(empty)"
	}
	return b.String()
}

func oneLine(m chat.Message, n int) string {
	s := strings.Join(strings.Fields(messageText(m)), " ")
	return m.Role + ": " + clip(s, n)
}

// clip shortens s to about n bytes on a rune boundary, keeping head and tail
// (a request's end often says what is actually asked).
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	head, tl := n*2/3, n/3
	for head > 0 && !runeStart(s[head]) {
		head--
	}
	start := len(s) - tl
	for start < len(s) && !runeStart(s[start]) {
		start++
	}
	return s[:head] + " […] " + s[start:]
}

func runeStart(b byte) bool { return b&0xC0 != 0x80 }
