package terminal

import (
	"context"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/env"
	"github.com/clawrl/clawrl/env/sandbox"
)

// providers are the sandbox backends the episode tests run on: bubblewrap
// (required under CLAWRL_REQUIRE_REFS=1, as CI runs) and Docker where a
// daemon runs (required under CLAWRL_REQUIRE_DOCKER=1).
var providers = []struct {
	name, require string
	new           func(sandbox.Limits) (sandbox.Provider, error)
}{
	{"bwrap", "CLAWRL_REQUIRE_REFS", func(l sandbox.Limits) (sandbox.Provider, error) { return sandbox.NewBwrap(l) }},
	{"docker", "CLAWRL_REQUIRE_DOCKER", func(l sandbox.Limits) (sandbox.Provider, error) {
		return sandbox.NewDocker(l, os.Getenv("CLAWRL_DOCKER_IMAGE"))
	}},
}

// forEachSandbox runs f as a subtest per backend with a pool of terminal
// episodes on it.
func forEachSandbox(t *testing.T, f func(t *testing.T, p *env.Pool)) {
	for _, pr := range providers {
		t.Run(pr.name, func(t *testing.T) {
			b, err := pr.new(sandbox.Limits{WallTime: 20 * time.Second})
			if err != nil {
				if os.Getenv(pr.require) == "1" {
					t.Fatalf("%s sandbox required (%s=1): %v", pr.name, pr.require, err)
				}
				t.Skipf("no %s sandbox: %v", pr.name, err)
			}
			p, err := env.NewPool(env.PoolConfig{Limit: 4}, &Kind{Sandbox: b})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { p.Shutdown() })
			f(t, p)
		})
	}
}

func shell(cmds ...string) env.Action {
	var m chat.Message
	for i, c := range cmds {
		m.ToolCalls = append(m.ToolCalls, chat.ToolCall{ID: string(rune('a' + i)), Type: "function",
			Function: chat.FunctionCall{Name: "shell", Arguments: `{"command": ` + quote(c) + `}`}})
	}
	return env.Action{Message: m}
}

func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

func runEpisode(t *testing.T, p *env.Pool, task env.Task, actions ...env.Action) env.Evaluation {
	t.Helper()
	ctx := context.Background()
	c, err := p.Create(ctx, task)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx, c.EpisodeID)
	for _, a := range actions {
		if _, err := p.Step(ctx, c.EpisodeID, a); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.Step(ctx, c.EpisodeID, env.Action{Message: chat.Message{Content: "done"}}); err != nil {
		t.Fatal(err)
	}
	ev, err := p.Evaluate(ctx, c.EpisodeID)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func TestRewardIsTwoAMinusOne(t *testing.T) { forEachSandbox(t, testRewardIsTwoAMinusOne) }

func testRewardIsTwoAMinusOne(t *testing.T, p *env.Pool) {
	task := env.Task{ID: "t", Env: Name, Prompt: "Put hi into a.txt and bye into b.txt", Files: map[string]string{"seed/x.txt": "x"},
		Test: "grep -qx hi a.txt && echo 'ok a' || echo 'not ok a'\ngrep -qx bye b.txt && echo 'ok b' || echo 'not ok b'\n[ -f seed/x.txt ] && echo ok seed || echo not ok seed\necho noise\n"}
	if ev := runEpisode(t, p, task, shell("echo hi > a.txt", "echo bye > b.txt")); !ev.Success || ev.Reward != 1 {
		t.Fatalf("all checks: %+v", ev)
	}
	if ev := runEpisode(t, p, task, shell("echo hi > a.txt; rm -r seed")); ev.Success || math.Abs(ev.Reward+1.0/3) > 1e-9 {
		t.Fatalf("one of three: %+v", ev)
	}
	ev := runEpisode(t, p, task, shell("cat "+testFile+"; ls -a"))
	if math.Abs(ev.Reward+1.0/3) > 1e-9 {
		t.Fatalf("nothing done: %+v", ev)
	}
	// A test script the agent tampered with beforehand is replaced.
	ev = runEpisode(t, p, task, shell("echo 'echo ok a; echo ok b' > "+testFile+"; ln -sf /dev/null "+testFile))
	if ev.Success {
		t.Fatalf("planted test script counted: %+v", ev)
	}
}

func TestCommandsAreSandboxed(t *testing.T) { forEachSandbox(t, testCommandsAreSandboxed) }

func testCommandsAreSandboxed(t *testing.T, p *env.Pool) {
	ctx := context.Background()
	c, err := p.Create(ctx, env.Task{ID: "s", Env: Name, Prompt: "p", Test: "echo ok"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx, c.EpisodeID)
	obs, err := p.Step(ctx, c.EpisodeID, shell("yes", "touch /usr/x", "cd sub 2>/dev/null; pwd"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(obs.Messages[0].Content, "[stopped: output limit]") || !strings.Contains(obs.Messages[1].Content, "[exit status 1]") ||
		!strings.HasPrefix(obs.Messages[2].Content, "/work") {
		t.Fatalf("%+v", obs.Messages)
	}
}

// Every generated task's test fails on the untouched starting files (so a
// do-nothing agent earns nothing), and the generator is deterministic.
func TestGeneratedTasksNeedWork(t *testing.T) { forEachSandbox(t, testGeneratedTasksNeedWork) }

func testGeneratedTasksNeedWork(t *testing.T, p *env.Pool) {
	tasks := Generate(21, 3, env.SplitTrain, "term")
	again := Generate(21, 3, env.SplitTrain, "term")
	for i, task := range tasks {
		if task.Prompt != again[i].Prompt || task.Test != again[i].Test {
			t.Fatal("same seed, different tasks")
		}
		if err := task.Check(); err != nil {
			t.Fatal(err)
		}
		ev := runEpisode(t, p, task)
		if ev.Success || ev.Details["total"].(int) == 0 {
			t.Errorf("task %s %q passes with nothing done: %+v", task.ID, task.Prompt, ev)
		}
		// The reference solution, played as the demonstration's actions
		// (its closing reply included), passes every check.
		demo, err := Demonstration(task)
		if err != nil {
			t.Fatal(err)
		}
		if len(demo) != 2 || len(demo[0].ToolCalls) != 1 || len(demo[1].ToolCalls) != 0 {
			t.Fatalf("demonstration %+v: want one shell call, then a reply", demo)
		}
		if ev := runEpisode(t, p, task, env.Action{Message: demo[0]}); !ev.Success || ev.Reward != 1 {
			t.Errorf("task %s %q: solution %q fails: %+v", task.ID, task.Prompt, task.Solution, ev)
		}
		// Deleting the starting files earns nothing a task did not ask
		// for: no partial credit that RL could learn to chase.
		if len(task.Files) > 0 && !strings.HasPrefix(task.Prompt, "Delete") {
			rm := demo[0]
			rm.ToolCalls = []chat.ToolCall{{ID: "call1", Type: "function", Function: chat.FunctionCall{Name: "shell", Arguments: `{"command":"rm -f *"}`}}}
			if del := runEpisode(t, p, task, env.Action{Message: rm}); del.Reward > ev.Reward {
				t.Errorf("task %s %q: rm -f * earns %v, more than doing nothing (%v)", task.ID, task.Prompt, del.Reward, ev.Reward)
			}
		}
	}
	if _, err := Demonstration(env.Task{ID: "x", Test: "echo ok"}); err == nil {
		t.Error("a task without a solution was demonstrated")
	}
}

func TestParseChecks(t *testing.T) {
	got := ParseChecks("ok a\nnot ok b c\n  ok\nokay\nnoise\n")
	if len(got) != 3 || !got[0].OK || got[1].OK || got[1].Name != "b c" || !got[2].OK {
		t.Fatalf("%+v", got)
	}
}

// Asking for more tasks than there are distinct prompts returns them all,
// each once, instead of looping (`clawrl env tasks --heldout 250` hung).
func TestGenerateStopsWhenPromptsRunOut(t *testing.T) {
	tasks := Generate(5000, 1, env.SplitTrain, "term")
	if len(tasks) >= 5000 || len(tasks) < 900 {
		t.Fatalf("%d tasks from a space of about a thousand prompts", len(tasks))
	}
	seen := map[string]bool{}
	for _, x := range tasks {
		if seen[x.Prompt] {
			t.Fatalf("prompt %q twice", x.Prompt)
		}
		seen[x.Prompt] = true
	}
	if a, b := Generate(30, 1, env.SplitTrain, "term"), tasks[:30]; a[29].Prompt != b[29].Prompt {
		t.Fatal("the bound changed what a seed gives")
	}
}

// A demonstration's arguments spell > and && as the shell does, not as
// json.Marshal's HTML-safe \u003e and \u0026\u0026 (which a warm start
// then taught the model to write).
func TestDemonstrationArgumentsUnescaped(t *testing.T) {
	for _, solution := range []string{"echo delta > alpha.txt", "rm kite.txt && touch done", "sort -n nums.txt > sorted.txt"} {
		demo, err := Demonstration(env.Task{ID: "t", Solution: solution})
		if err != nil {
			t.Fatal(err)
		}
		args := demo[0].ToolCalls[0].Function.Arguments
		if want := `{"command":"` + solution + `"}`; args != want {
			t.Errorf("arguments %s, want %s", args, want)
		}
	}
}
