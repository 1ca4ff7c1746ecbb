package toolcall

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

func provider(t *testing.T) sandbox.Provider {
	t.Helper()
	b, err := sandbox.NewBwrap(sandbox.Limits{WallTime: 20 * time.Second})
	if err != nil {
		if os.Getenv("CLAWRL_REQUIRE_REFS") == "1" {
			t.Fatalf("bubblewrap required: %v", err)
		}
		t.Skipf("no bubblewrap sandbox: %v", err)
	}
	return b
}

func call(id, name, args string) chat.ToolCall {
	return chat.ToolCall{ID: id, Type: "function", Function: chat.FunctionCall{Name: name, Arguments: args}}
}

func TestEpisodeWithPythonTool(t *testing.T) {
	pool, err := env.NewPool(env.PoolConfig{Limit: 2}, &Kind{Sandbox: provider(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Shutdown()
	ctx := context.Background()
	task := env.Task{ID: "x", Env: Name, Prompt: "What is 123 * 456?", Answer: "56088"}
	c, err := pool.Create(ctx, task)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Observation.Messages) != 2 || c.Observation.Tools[0].Function.Name != "python" {
		t.Fatalf("%+v", c.Observation)
	}
	obs, err := pool.Step(ctx, c.EpisodeID, env.Action{Message: chat.Message{Role: "assistant", ToolCalls: []chat.ToolCall{
		call("c1", "python", `{"code": "print(123 * 456)"}`),
		call("c2", "python", `{"code": "import socket\nsocket.create_connection(('1.1.1.1', 80), timeout=1)"}`),
		call("c3", "calculator", `{}`),
		call("c4", "python", `not json`),
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(obs.Messages) != 4 || obs.Done {
		t.Fatalf("%+v", obs)
	}
	if obs.Messages[0].Content != "56088\n" || obs.Messages[0].ToolCallID != "c1" {
		t.Fatalf("tool result %q", obs.Messages[0].Content)
	}
	if !strings.Contains(obs.Messages[1].Content, "unreachable") || !strings.Contains(obs.Messages[1].Content, "[exit status 1]") {
		t.Fatalf("network call result %q", obs.Messages[1].Content)
	}
	if !strings.Contains(obs.Messages[2].Content, "unknown tool") || !strings.Contains(obs.Messages[3].Content, "JSON object") {
		t.Fatalf("bad calls: %+v", obs.Messages[2:])
	}
	if obs, err = pool.Step(ctx, c.EpisodeID, env.Action{Message: chat.Message{Role: "assistant", Content: "So the answer is \\boxed{56,088}."}}); err != nil || !obs.Done {
		t.Fatalf("%+v %v", obs, err)
	}
	ev, err := pool.Evaluate(ctx, c.EpisodeID)
	if err != nil {
		t.Fatal(err)
	}
	if !ev.Success || ev.Reward != 1 || ev.Details["tool_calls"] != 4 || ev.Details["bad_tool_calls"] != 2 {
		t.Fatalf("%+v", ev)
	}
	if err := pool.Close(ctx, c.EpisodeID); err != nil {
		t.Fatal(err)
	}

	// Out of steps without answering: wrong, shaped by the tool calls.
	task.MaxSteps = 1
	c, err = pool.Create(ctx, task)
	if err != nil {
		t.Fatal(err)
	}
	obs, err = pool.Step(ctx, c.EpisodeID, env.Action{Message: chat.Message{ToolCalls: []chat.ToolCall{call("a", "python", `{"code":"while True: print('y')"}`)}}})
	if err != nil || !obs.Done || !strings.Contains(obs.Messages[0].Content, "[stopped: output limit]") {
		t.Fatalf("%+v %v", obs, err)
	}
	ev, _ = pool.Evaluate(ctx, c.EpisodeID)
	if ev.Success || ev.Reward != Reward(false, 1) {
		t.Fatalf("%+v", ev)
	}
}

func TestReward(t *testing.T) {
	for _, tc := range []struct {
		correct bool
		calls   int
		want    float64
	}{{true, 0, 1}, {true, 5, 1}, {false, 0, -1.1}, {false, 2, -1}, {false, 4, -0.9}, {false, 10, -0.6}, {false, 30, -0.6}} {
		if got := Reward(tc.correct, tc.calls); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("Reward(%v, %d) = %v, want %v", tc.correct, tc.calls, got, tc.want)
		}
	}
}

func TestExtractAnswer(t *testing.T) {
	for in, want := range map[string]string{
		"The total is \\boxed{42}.":        "42",
		"\\boxed{1} then \\boxed{ 7 }":     "7",
		"The answer is: 1,250 apples":      "1,250",
		"Answer = -3":                      "-3",
		"I think 3 boxes of 4 make 12":     "12",
		"no number here":                   "",
		"so $ 15 dollars. answer is $15":   "15",
		"\\boxed{\\frac{1}{2}} and then 5": "5",
		"Final: 3.5":                       "3.5",
	} {
		if got := ExtractAnswer(in); got != want {
			t.Errorf("ExtractAnswer(%q) = %q, want %q", in, got, want)
		}
	}
	for _, tc := range []struct {
		a, b string
		same bool
	}{{"1,250", "1250", true}, {"$15", "15", true}, {"15.0", "15", true}, {"15.5", "15", false}, {"", "", false}, {"-3", "3", false}} {
		if SameAnswer(tc.a, tc.b) != tc.same {
			t.Errorf("SameAnswer(%q, %q) != %v", tc.a, tc.b, tc.same)
		}
	}
}

func TestGenerate(t *testing.T) {
	a, b := Generate(200, 7, env.SplitTrain, "tc-train"), Generate(200, 7, env.SplitTrain, "tc-train")
	if len(a) != 200 {
		t.Fatal(len(a))
	}
	prompts := map[string]bool{}
	for i := range a {
		if a[i].Prompt != b[i].Prompt || a[i].Answer != b[i].Answer {
			t.Fatal("same seed, different tasks")
		}
		if err := a[i].Check(); err != nil {
			t.Fatal(err)
		}
		prompts[a[i].Prompt] = true
	}
	if len(prompts) != 200 {
		t.Fatalf("%d distinct prompts of 200", len(prompts))
	}
	if c := Generate(50, 8, env.SplitHeldOut, "tc-heldout"); c[0].Prompt == a[0].Prompt || c[0].Split != env.SplitHeldOut {
		t.Fatal("another seed gives the same tasks")
	}
}

// Every generated task's reference solution, run by Python in the sandbox,
// prints the task's answer.
func TestSolutionsPrintTheAnswer(t *testing.T) {
	sb, err := provider(t).New(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	tasks := Generate(400, 1, env.SplitTrain, "tc-train")
	var code strings.Builder
	for _, task := range tasks {
		code.WriteString(task.Solution + "\n")
	}
	res, err := sb.Run(context.Background(), sandbox.Command{Args: []string{"python3", "-"}, Stdin: code.String()})
	if err != nil || res.ExitCode != 0 || res.Cut != "" {
		t.Fatalf("run solutions: %v, %+v", err, res)
	}
	lines := strings.Split(strings.TrimSpace(res.Output), "\n")
	if len(lines) != len(tasks) {
		t.Fatalf("%d lines for %d tasks", len(lines), len(tasks))
	}
	for i, task := range tasks {
		if !SameAnswer(lines[i], task.Answer) {
			t.Errorf("task %q: solution %q printed %q, want %s", task.Prompt, task.Solution, lines[i], task.Answer)
		}
	}
	if _, err := Demonstration(env.Task{ID: "x", Answer: "1"}); err == nil {
		t.Error("a task without a solution was demonstrated")
	}
}

// A demonstration's code keeps < > & as written (not \u003c, \u003e, \u0026).
func TestDemonstrationArgumentsUnescaped(t *testing.T) {
	code := "x = 3 if 2 < 5 and 7 > 1 else 0\nprint(x & 1)"
	demo, err := Demonstration(env.Task{ID: "t", Solution: code, Answer: "1"})
	if err != nil {
		t.Fatal(err)
	}
	if args := demo[0].ToolCalls[0].Function.Arguments; strings.Contains(args, `\u00`) || !strings.Contains(args, "2 < 5 and 7 > 1") {
		t.Errorf("arguments %s", args)
	}
}
