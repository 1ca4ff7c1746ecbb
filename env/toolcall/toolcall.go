// Package toolcall is the tool-call environment (the seed's ReTool setting):
// the model answers a math word problem and may call a `python` tool, which
// runs its code in the episode's sandbox and returns the output. The final
// answer (the last \boxed{…}, else "answer: …", else the last number of the
// reply without a tool call) is checked exactly against the task's answer.
//
// Reward, as the seed computes it: +1 for a correct answer; a wrong or
// missing one gets −1 shaped by the number of tool calls n,
// min(−0.6, −1 + (n − 2)/2 · 0.1), which favours trying the tool over
// guessing.
package toolcall

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/env"
	"github.com/clawrl/clawrl/env/sandbox"
)

// Name is the Task.Env value of this environment.
const Name = "toolcall"

// DefaultMaxSteps bounds an episode's assistant messages.
const DefaultMaxSteps = 4

// MaxToolOutput is how much of a tool's output the model sees.
const MaxToolOutput = 1500

// SystemPrompt tells the model how to use the tool and answer.
const SystemPrompt = "You solve math word problems. You can run Python code with the python tool; it prints what your code prints. " +
	"When you know the answer, reply with the final answer as \\boxed{N}."

// Tools are the tools offered.
var Tools = []chat.Tool{{Type: "function", Function: chat.FunctionDef{
	Name:        "python",
	Description: "Run Python 3 code and return what it prints (stdout and stderr).",
	Parameters:  json.RawMessage(`{"type":"object","properties":{"code":{"type":"string","description":"Python code to run"}},"required":["code"]}`),
}}}

// Kind runs toolcall episodes.
type Kind struct {
	Sandbox sandbox.Provider
	// Python is the interpreter inside the sandbox; default "python3".
	Python string
}

var _ env.Kind = (*Kind)(nil)

// Name implements env.Kind.
func (k *Kind) Name() string { return Name }

// Start implements env.Kind.
func (k *Kind) Start(ctx context.Context, t env.Task) (env.Episode, env.Observation, error) {
	if strings.TrimSpace(t.Answer) == "" {
		return nil, env.Observation{}, fmt.Errorf("toolcall task %q has no answer", t.ID)
	}
	sb, err := k.Sandbox.New(ctx)
	if err != nil {
		return nil, env.Observation{}, err
	}
	max := t.MaxSteps
	if max <= 0 {
		max = DefaultMaxSteps
	}
	py := k.Python
	if py == "" {
		py = "python3"
	}
	ep := &episode{sb: sb, task: t, maxSteps: max, python: py}
	return ep, env.Observation{
		Messages: []chat.Message{{Role: chat.RoleSystem, Content: SystemPrompt}, {Role: chat.RoleUser, Content: t.Prompt}},
		Tools:    Tools,
	}, nil
}

type episode struct {
	sb       sandbox.Sandbox
	task     env.Task
	maxSteps int
	python   string

	steps     int
	toolCalls int
	badCalls  int
	cuts      []string
	answered  bool
	final     string
}

func (e *episode) Step(ctx context.Context, a env.Action) (env.Observation, error) {
	e.steps++
	if len(a.Message.ToolCalls) == 0 {
		e.answered = true
		e.final = a.Message.Content
		return env.Observation{Done: true, Info: "answered"}, nil
	}
	var obs env.Observation
	for _, c := range a.Message.ToolCalls {
		e.toolCalls++
		out := e.call(ctx, c)
		obs.Messages = append(obs.Messages, chat.Message{Role: chat.RoleTool, ToolCallID: c.ID, Name: c.Function.Name, Content: out})
	}
	if e.steps >= e.maxSteps {
		obs.Done, obs.Info = true, fmt.Sprintf("step limit %d reached without an answer", e.maxSteps)
	}
	return obs, nil
}

// call runs one tool call and returns what the model sees.
func (e *episode) call(ctx context.Context, c chat.ToolCall) string {
	code, err := env.ToolArgument(c, "python", "code", "python code")
	if err != nil {
		e.badCalls++
		return err.Error()
	}
	res, err := e.sb.Run(ctx, sandbox.Command{Args: []string{e.python, "-"}, Stdin: code})
	if err != nil {
		return "error: " + err.Error()
	}
	if res.Cut != "" {
		e.cuts = append(e.cuts, res.Cut)
	}
	return res.Observation(MaxToolOutput, "(no output; print the result)")
}

func (e *episode) Evaluate(context.Context) (env.Evaluation, error) {
	given := ExtractAnswer(e.final)
	correct := e.answered && given != "" && SameAnswer(given, e.task.Answer)
	return env.Evaluation{Reward: Reward(correct, e.toolCalls), Success: correct, Details: map[string]any{
		"expected": e.task.Answer, "given": given, "answered": e.answered, "tool_calls": e.toolCalls,
		"bad_tool_calls": e.badCalls, "steps": e.steps, "sandbox_cuts": e.cuts,
	}}, nil
}

func (e *episode) Close() error { return e.sb.Close() }

// Reward is the seed's ReTool reward.
func Reward(correct bool, toolCalls int) float64 {
	if correct {
		return 1
	}
	return min(-0.6, -1+float64(toolCalls-2)/2*0.1)
}

var (
	boxedRe  = regexp.MustCompile(`\\boxed\{([^{}]*)\}`)
	answerRe = regexp.MustCompile(`(?i)answer\s*(?:is)?\s*[:=]?\s*\$?(-?[0-9][0-9,]*(?:\.[0-9]+)?)`)
	numberRe = regexp.MustCompile(`-?[0-9][0-9,]*(?:\.[0-9]+)?`)
)

// ExtractAnswer finds the final answer in a reply: the last \boxed{…}, else
// the last "answer: X", else the last number.
func ExtractAnswer(text string) string {
	if m := boxedRe.FindAllStringSubmatch(text, -1); len(m) > 0 {
		return strings.TrimSpace(m[len(m)-1][1])
	}
	if m := answerRe.FindAllStringSubmatch(text, -1); len(m) > 0 {
		return m[len(m)-1][1]
	}
	if m := numberRe.FindAllString(text, -1); len(m) > 0 {
		return m[len(m)-1]
	}
	return ""
}

// SameAnswer compares exactly after removing what does not change a
// number: spaces, thousands separators, a leading "$", a trailing ".0".
func SameAnswer(given, want string) bool {
	norm := func(s string) string {
		s = strings.TrimSpace(s)
		s = strings.TrimPrefix(s, "$")
		s = strings.ReplaceAll(s, ",", "")
		s = strings.ReplaceAll(s, " ", "")
		s = strings.TrimSuffix(s, ".")
		s = strings.TrimSuffix(s, ".0")
		return s
	}
	return norm(given) != "" && norm(given) == norm(want)
}
