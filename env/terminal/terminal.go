// Package terminal is the terminal environment (the seed's terminal-bench
// setting): the model works in a shell in the episode's sandbox, whose
// working folder starts with the task's files, by calling a `shell` tool;
// a reply without a tool call ends the episode. The task's test script then
// runs in the same sandbox and prints one line per check, "ok NAME" or
// "not ok NAME"; with a the fraction of checks passed, the reward is 2a − 1
// (success when every check passed).
//
// Each command runs in a fresh `sh -c` in the working folder /work: files
// persist between commands, shell variables and `cd` do not (as in
// terminal-bench's non-interactive mode).
package terminal

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/env"
	"github.com/clawrl/clawrl/env/sandbox"
)

// Name is the Task.Env value of this environment.
const Name = "terminal"

// DefaultMaxSteps bounds an episode's assistant messages.
const DefaultMaxSteps = 6

// MaxToolOutput is how much of a command's output the model sees.
const MaxToolOutput = 2000

// testFile is where the test script is put at evaluation (after the agent
// is done, so it never sees it).
const testFile = ".clawrl-test.sh"

// SystemPrompt tells the model how to work.
const SystemPrompt = "You work in a Linux shell in the folder /work. Run commands with the shell tool. " +
	"When the task is done, reply briefly without calling a tool."

// Tools are the tools offered.
var Tools = []chat.Tool{{Type: "function", Function: chat.FunctionDef{
	Name:        "shell",
	Description: "Run a shell command in /work and return its output.",
	Parameters:  json.RawMessage(`{"type":"object","properties":{"command":{"type":"string","description":"the command"}},"required":["command"]}`),
}}}

// Kind runs terminal episodes.
type Kind struct {
	Sandbox sandbox.Provider
}

var _ env.Kind = (*Kind)(nil)

// Name implements env.Kind.
func (k *Kind) Name() string { return Name }

// Start implements env.Kind.
func (k *Kind) Start(ctx context.Context, t env.Task) (env.Episode, env.Observation, error) {
	if strings.TrimSpace(t.Test) == "" {
		return nil, env.Observation{}, fmt.Errorf("terminal task %q has no test script", t.ID)
	}
	sb, err := k.Sandbox.New(ctx)
	if err != nil {
		return nil, env.Observation{}, err
	}
	for p, content := range t.Files {
		if err := sb.WriteFile(p, []byte(content), 0o644); err != nil {
			sb.Close()
			return nil, env.Observation{}, fmt.Errorf("terminal task %q: %w", t.ID, err)
		}
	}
	max := t.MaxSteps
	if max <= 0 {
		max = DefaultMaxSteps
	}
	return &episode{sb: sb, task: t, maxSteps: max}, env.Observation{
		Messages: []chat.Message{{Role: chat.RoleSystem, Content: SystemPrompt}, {Role: chat.RoleUser, Content: t.Prompt}},
		Tools:    Tools,
	}, nil
}

type episode struct {
	sb       sandbox.Sandbox
	task     env.Task
	maxSteps int

	steps, commands, badCalls int
	cuts                      []string
	finished                  bool
}

func (e *episode) Step(ctx context.Context, a env.Action) (env.Observation, error) {
	e.steps++
	if len(a.Message.ToolCalls) == 0 {
		e.finished = true
		return env.Observation{Done: true, Info: "agent finished"}, nil
	}
	var obs env.Observation
	for _, c := range a.Message.ToolCalls {
		obs.Messages = append(obs.Messages, chat.Message{Role: chat.RoleTool, ToolCallID: c.ID, Name: c.Function.Name, Content: e.call(ctx, c)})
	}
	if e.steps >= e.maxSteps {
		obs.Done, obs.Info = true, fmt.Sprintf("step limit %d reached", e.maxSteps)
	}
	return obs, nil
}

func (e *episode) call(ctx context.Context, c chat.ToolCall) string {
	command, err := env.ToolArgument(c, "shell", "command", "shell command")
	if err != nil {
		e.badCalls++
		return err.Error()
	}
	e.commands++
	res, err := e.sb.Run(ctx, sandbox.Command{Args: []string{"sh", "-c", command}})
	if err != nil {
		return "error: " + err.Error()
	}
	if res.Cut != "" {
		e.cuts = append(e.cuts, res.Cut)
	}
	return res.Observation(MaxToolOutput, "(no output)")
}

func (e *episode) Evaluate(ctx context.Context) (env.Evaluation, error) {
	if err := e.sb.WriteFile(testFile, []byte(e.task.Test), 0o644); err != nil {
		return env.Evaluation{}, fmt.Errorf("terminal task %q: %w", e.task.ID, err)
	}
	res, err := e.sb.Run(ctx, sandbox.Command{Args: []string{"sh", testFile}})
	if err != nil {
		return env.Evaluation{}, fmt.Errorf("terminal task %q: run test: %w", e.task.ID, err)
	}
	checks := ParseChecks(res.Output)
	passed := 0
	for _, c := range checks {
		if c.OK {
			passed++
		}
	}
	a := 0.0
	if len(checks) > 0 {
		a = float64(passed) / float64(len(checks))
	}
	return env.Evaluation{Reward: 2*a - 1, Success: len(checks) > 0 && passed == len(checks), Details: map[string]any{
		"checks": checks, "passed": passed, "total": len(checks), "commands": e.commands, "bad_tool_calls": e.badCalls,
		"steps": e.steps, "finished": e.finished, "sandbox_cuts": e.cuts, "test_cut": res.Cut,
	}}, nil
}

func (e *episode) Close() error { return e.sb.Close() }

// Check is one line of a test script's output.
type Check struct {
	Name string `json:"name"`
	OK   bool   `json:"ok"`
}

// ParseChecks reads "ok NAME" and "not ok NAME" lines; other lines are
// ignored.
func ParseChecks(out string) []Check {
	var cs []Check
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "not ok"):
			cs = append(cs, Check{Name: strings.TrimSpace(strings.TrimPrefix(line, "not ok"))})
		case line == "ok" || strings.HasPrefix(line, "ok "):
			cs = append(cs, Check{Name: strings.TrimSpace(strings.TrimPrefix(line, "ok")), OK: true})
		}
	}
	return cs
}
