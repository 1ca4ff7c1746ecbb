package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/env"
)

// Demo is a scripted episode: a task's reference actions played in the
// real environment.
type Demo struct {
	Task env.Task
	// Messages are the first observation's messages, then each action
	// followed by what the environment answered.
	Messages   []chat.Message
	Tools      []chat.Tool
	Evaluation env.Evaluation
}

// Demonstrate plays actions, in order, in a new episode of task and
// evaluates it. Playing them in the environment (rather than writing the
// observations by hand) makes the demonstration show exactly what an agent
// would see, and the evaluation says whether it is worth learning from.
// Actions left once the environment says done are an error.
func Demonstrate(ctx context.Context, e env.Env, task env.Task, actions []chat.Message) (Demo, error) {
	d := Demo{Task: task}
	c, err := e.Create(ctx, task)
	if err != nil {
		return d, fmt.Errorf("demonstrate task %q: %w", task.ID, err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_ = e.Close(cctx, c.EpisodeID) // the demo is complete or failed either way
	}()
	d.Messages = append(d.Messages, c.Observation.Messages...)
	d.Tools = c.Observation.Tools
	for i, a := range actions {
		a.Role = chat.RoleAssistant
		obs, err := e.Step(ctx, c.EpisodeID, env.Action{Message: a})
		if err != nil {
			return d, fmt.Errorf("demonstrate task %q action %d: %w", task.ID, i, err)
		}
		d.Messages = append(d.Messages, a)
		d.Messages = append(d.Messages, obs.Messages...)
		if obs.Done && i < len(actions)-1 {
			return d, fmt.Errorf("demonstrate task %q: the episode ended after action %d of %d (%s)", task.ID, i+1, len(actions), obs.Info)
		}
	}
	if d.Evaluation, err = e.Evaluate(ctx, c.EpisodeID); err != nil {
		return d, fmt.Errorf("demonstrate task %q: %w", task.ID, err)
	}
	return d, nil
}

// DemoStep is one training sequence of a demonstration: the prompt the
// agent would see before an action (rendered as Runner renders it) and the
// action as the model would write it, through its end-of-turn token.
type DemoStep struct {
	PromptIDs     []int32
	CompletionIDs []int32
}

// Steps renders the demonstration with the format the runner uses
// (WithTools(format)): one DemoStep per assistant message.
func (d Demo) Steps(format engine.Format) ([]DemoStep, error) {
	format = WithTools(format)
	stops := format.StopIDs()
	var out []DemoStep
	for i, m := range d.Messages {
		if m.Role != chat.RoleAssistant {
			continue
		}
		prompt, err := format.Render(d.Messages[:i], d.Tools, engine.RenderOptions{AddGenerationPrompt: true})
		if err != nil {
			return nil, fmt.Errorf("task %q message %d: %w", d.Task.ID, i, err)
		}
		full, err := format.Render(d.Messages[:i+1], d.Tools, engine.RenderOptions{})
		if err != nil {
			return nil, fmt.Errorf("task %q message %d: %w", d.Task.ID, i, err)
		}
		rest, ok := strings.CutPrefix(full, prompt)
		if !ok {
			return nil, fmt.Errorf("task %q message %d: the chat template's rendering of the reply does not extend the prompt", d.Task.ID, i)
		}
		ids := format.Encode(rest)
		end := slices.IndexFunc(ids, func(id int32) bool { return slices.Contains(stops, id) })
		if end < 0 {
			return nil, fmt.Errorf("task %q message %d: no end-of-turn token after the reply", d.Task.ID, i)
		}
		out = append(out, DemoStep{PromptIDs: format.Encode(prompt), CompletionIDs: ids[:end+1]})
	}
	if len(out) == 0 {
		return nil, errors.New("demonstration has no assistant message")
	}
	return out, nil
}
