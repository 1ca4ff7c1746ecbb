// Package env is the environment contract of clawrl's agent training
// (DESIGN.md, "agent/, env/"): an agent acts in an episode of an environment
// created from a task, and the environment says what it saw and, at the end,
// how well it did.
//
//	Create(task)        → episode id, first observation (messages, tools)
//	Step(id, action)    → observation (tool results, …), done
//	Evaluate(id)        → reward and details
//	Close(id)
//
// Env is that contract. Three things implement it: Pool runs episodes of
// in-process environment kinds (toolcall, terminal, …) with a concurrency
// limit and leases; Client talks to a Pool in another process or on another
// machine over the HTTP protocol served by Handler (`clawrl env serve`);
// Balance spreads episodes over several Envs by their load. The agent
// (package agent) only sees Env, so where an environment runs is a flag.
//
// Actions and observations are chat messages on purpose: an action is the
// assistant message the model wrote (text and tool calls, parsed from the
// model's own tool-call format), an observation is the messages the agent
// appends to its context next (tool results, a nudge), plus the tools offered.
// New environments fit without changing the contract:
//   - SWE: a Kind whose Start checks out Task.Extra's repository at its commit
//     into the episode's sandbox, offers shell and edit tools, and whose
//     Evaluate runs the task's tests (resolved ±1);
//   - GUI: a Kind that starts Xvfb and an app in the sandbox and answers each
//     action (a click or key tool call) with the accessibility tree as text —
//     screenshots would add an attachment field to Observation, which older
//     clients ignore (unknown JSON fields are skipped on both sides).
package env

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/clawrl/clawrl/chat"
)

// Errors every implementation returns (wrapped) so callers can tell them
// apart whether the environment is in-process or remote.
var (
	// ErrNotFound: no such episode (never created, closed, or reaped after
	// its lease ran out).
	ErrNotFound = errors.New("env: episode not found")
	// ErrBadRequest: the task or action is malformed or names an unknown
	// environment kind.
	ErrBadRequest = errors.New("env: bad request")
	// ErrClosed: the environment is shutting down.
	ErrClosed = errors.New("env: closed")
)

// Env is the environment contract. Calls on one episode are serialised by
// the implementation; calls on different episodes run concurrently.
type Env interface {
	// Create starts an episode of task. It waits while the environment is at
	// its concurrency limit (until ctx ends).
	Create(ctx context.Context, task Task) (Created, error)
	// Step applies the agent's action and returns what it observes next.
	Step(ctx context.Context, id string, a Action) (Observation, error)
	// Evaluate scores the episode (it may be called before the episode is
	// done: the agent ran out of steps).
	Evaluate(ctx context.Context, id string) (Evaluation, error)
	// Heartbeat renews the episode's lease. Every call on an episode renews
	// it; an episode idle longer than its lease is closed by the environment,
	// so a crashed agent leaks nothing.
	Heartbeat(ctx context.Context, id string) error
	// Close ends the episode and frees its sandbox.
	Close(ctx context.Context, id string) error
	// Load reports how busy the environment is.
	Load(ctx context.Context) (Load, error)
}

// Task is one line of a task file (JSONL; see tasks.go for the format).
type Task struct {
	ID     string `json:"id"`
	Env    string `json:"env"`             // the environment kind: toolcall, terminal, …
	Split  string `json:"split,omitempty"` // train or heldout
	Prompt string `json:"prompt"`          // what the user asks
	// Answer is the exact expected answer (toolcall).
	Answer string `json:"answer,omitempty"`
	// Files are the episode's starting files, path relative to the working
	// folder → content (terminal).
	Files map[string]string `json:"files,omitempty"`
	// Test is a shell script run in the episode's sandbox at evaluation; it
	// prints one line per check, "ok NAME" or "not ok NAME" (terminal).
	Test string `json:"test,omitempty"`
	// Solution is a reference solution the environment's demonstrations
	// play (Python code printing the answer for toolcall; a shell script
	// for terminal): the programmatic source of SFT warm-start transcripts.
	// It is never shown to the agent.
	Solution string `json:"solution,omitempty"`
	// MaxSteps bounds the agent's actions (0: the environment's default).
	MaxSteps int `json:"max_steps,omitempty"`
	// Extra carries fields of environment kinds added later (a repository
	// and commit for SWE, an app for GUI), verbatim.
	Extra json.RawMessage `json:"extra,omitempty"`
}

// Action is what the agent did: the assistant message it wrote.
type Action struct {
	Message chat.Message `json:"message"`
}

// Observation is what the agent sees after Create or Step.
type Observation struct {
	// Messages to append to the agent's context: the system and user
	// messages after Create, tool results (one per call, in order) after a
	// step with tool calls.
	Messages []chat.Message `json:"messages"`
	// Tools offered to the model (set after Create; the same for the episode).
	Tools []chat.Tool `json:"tools,omitempty"`
	// Done: the episode ended (the agent answered, or ran out of steps).
	Done bool `json:"done"`
	// Info says why it ended or what went wrong in the step, for logs.
	Info string `json:"info,omitempty"`
}

// Evaluation is an episode's outcome.
type Evaluation struct {
	Reward  float64 `json:"reward"`
	Success bool    `json:"success"`
	// Details: what was checked (the expected and given answer, each
	// check's verdict, the number of tool calls, sandbox cut-offs).
	Details map[string]any `json:"details,omitempty"`
}

// Created is a new episode.
type Created struct {
	EpisodeID   string        `json:"episode_id"`
	Observation Observation   `json:"observation"`
	Lease       time.Duration `json:"-"`
	// LeaseSeconds is Lease on the wire.
	LeaseSeconds float64 `json:"lease_seconds"`
}

// Load is how busy an environment is.
type Load struct {
	Running int      `json:"running"` // episodes open
	Waiting int      `json:"waiting"` // Create calls waiting for a slot
	Limit   int      `json:"limit"`   // most episodes open at once
	Created int64    `json:"created_total"`
	Closed  int64    `json:"closed_total"`
	Reaped  int64    `json:"reaped_total"` // closed because their lease ran out
	Failed  int64    `json:"failed_total"` // Create or Step calls that failed
	Kinds   []string `json:"kinds"`
}

// Free is how many more episodes could start now.
func (l Load) Free() int { return l.Limit - l.Running - l.Waiting }

// Kind is an environment kind run in-process: it starts episodes of tasks.
type Kind interface {
	// Name is the Task.Env value the kind serves.
	Name() string
	// Start begins an episode of task.
	Start(ctx context.Context, task Task) (Episode, Observation, error)
}

// Episode is one running episode of a Kind. The Pool serialises its calls.
type Episode interface {
	Step(ctx context.Context, a Action) (Observation, error)
	Evaluate(ctx context.Context) (Evaluation, error)
	Close() error
}

// KeepAlive renews an episode's lease every interval until ctx ends; the
// agent runs it beside each open episode (a generation can take longer than
// a lease on a CPU).
func KeepAlive(ctx context.Context, e Env, id string, interval time.Duration) {
	if interval <= 0 {
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_ = e.Heartbeat(ctx, id) // a failure shows up on the next Step
		}
	}
}

func badRequest(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadRequest, fmt.Sprintf(format, args...))
}

// ToolArgument checks that a call is of the environment's one tool and
// returns its one string argument key (what describes it: "python code").
// The error is the message the model sees in the tool's answer.
func ToolArgument(c chat.ToolCall, tool, key, what string) (string, error) {
	if c.Function.Name != tool {
		return "", fmt.Errorf("error: unknown tool %q; the only tool is %s", c.Function.Name, tool)
	}
	var args map[string]json.RawMessage
	var v string
	if err := json.Unmarshal([]byte(c.Function.Arguments), &args); err != nil ||
		json.Unmarshal(args[key], &v) != nil || strings.TrimSpace(v) == "" {
		return "", fmt.Errorf(`error: arguments must be a JSON object {"%s": "<%s>"}`, key, what)
	}
	return v, nil
}
