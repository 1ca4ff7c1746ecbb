package terminal

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/env"
)

// Generate makes n shell tasks from seed: each has starting files, a prompt,
// a test script with one to three checks and a reference solution (one
// shell command, for demonstrations). The same seed gives the same
// tasks. The prompts are finite (about a thousand): when n exceeds them
// it returns every prompt it found, fewer than n, rather than looping.
func Generate(n int, seed uint64, split, idPrefix string) []env.Task {
	r := rand.New(rand.NewPCG(seed, seed^0xda942042e4dd58b5))
	out := make([]env.Task, 0, n)
	seen := map[string]bool{}
	for misses := 0; len(out) < n && misses < env.ExhaustedAfter; {
		t := task(r)
		if seen[t.Prompt] {
			misses++
			continue
		}
		misses = 0
		seen[t.Prompt] = true
		t.ID, t.Env, t.Split = fmt.Sprintf("%s-%04d", idPrefix, len(out)+1), Name, split
		out = append(out, t)
	}
	return out
}

var words = []string{"alpha", "bravo", "cedar", "delta", "ember", "fjord", "gamma", "harbor", "iris", "juniper", "kite", "lumen", "maple", "nova", "orbit", "pebble"}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

// check is one test line: a shell condition and its name.
func check(name, cond string) string {
	return fmt.Sprintf("if %s; then echo 'ok %s'; else echo 'not ok %s'; fi\n", cond, name, name)
}

// task draws one task. Each check passes only for progress toward the goal:
// a check that deleting a file also satisfies ("no old word left" on a file
// that is gone) paid a policy partial credit for rm, and RL learned to
// delete files (BENCHMARKS.md, "Terminal environment").
func task(r *rand.Rand) env.Task {
	w1, w2 := pick(r, words), pick(r, words)
	for w2 == w1 {
		w2 = pick(r, words)
	}
	file := w1 + ".txt"
	switch r.IntN(7) {
	case 0:
		return env.Task{Prompt: fmt.Sprintf("Create a file named %s containing the word %s.", file, w2),
			Solution: fmt.Sprintf("echo %s > %s", w2, file),
			Test:     check("exists", fmt.Sprintf("[ -f %s ]", file)) + check("content", fmt.Sprintf("grep -qx '%s' %s", w2, file))}
	case 1:
		dir := w1 + "_" + w2
		return env.Task{Prompt: fmt.Sprintf("Make a directory named %s.", dir), Solution: "mkdir " + dir,
			Test: check("dir", fmt.Sprintf("[ -d %s ]", dir))}
	case 2:
		lines := 2 + r.IntN(9)
		var b strings.Builder
		for range lines {
			b.WriteString(pick(r, words) + "\n")
		}
		return env.Task{Prompt: "Count the lines of data.txt and write the number into count.txt.",
			Files:    map[string]string{"data.txt": b.String()},
			Solution: "wc -l < data.txt > count.txt",
			Test:     check("exists", "[ -f count.txt ]") + check("count", fmt.Sprintf("[ \"$(tr -d ' \\n' < count.txt)\" = %d ]", lines))}
	case 3:
		return env.Task{Prompt: fmt.Sprintf("Rename %s to %s.txt.", file, w2+"_new"),
			Files:    map[string]string{file: w1 + "\n"},
			Solution: fmt.Sprintf("mv %s %s_new.txt", file, w2),
			Test:     check("old gone", fmt.Sprintf("[ ! -e %s ] && [ -f %s_new.txt ]", file, w2)) + check("new", fmt.Sprintf("grep -qx %s %s_new.txt", w1, w2))}
	case 4:
		nums := make([]int, 3+r.IntN(5))
		var b strings.Builder
		for i := range nums {
			nums[i] = r.IntN(100)
			fmt.Fprintln(&b, nums[i])
		}
		slices.Sort(nums)
		var want strings.Builder
		for _, x := range nums {
			fmt.Fprintln(&want, x)
		}
		return env.Task{Prompt: "Sort the numbers in nums.txt in increasing numeric order and write them, one per line, to sorted.txt.",
			Files:    map[string]string{"nums.txt": b.String()},
			Solution: "sort -n nums.txt > sorted.txt",
			Test: check("exists", "[ -f sorted.txt ]") +
				check("sorted", fmt.Sprintf("[ \"$(cat sorted.txt)\" = \"$(printf '%s')\" ]", strings.TrimRight(strings.ReplaceAll(want.String(), "\n", "\\n"), "\\n")))}
	case 5:
		return env.Task{Prompt: fmt.Sprintf("In notes.txt, replace every %s with %s.", w1, w2),
			Files:    map[string]string{"notes.txt": fmt.Sprintf("%s one\ntwo %s\n%s\n", w1, w1, w1)},
			Solution: fmt.Sprintf("sed -i 's/%s/%s/g' notes.txt", w1, w2),
			Test:     check("no old", fmt.Sprintf("[ -s notes.txt ] && ! grep -q %s notes.txt", w1)) + check("new", fmt.Sprintf("[ \"$(grep -c %s notes.txt)\" -ge 3 ]", w2))}
	default:
		return env.Task{Prompt: fmt.Sprintf("Delete the file %s and create an empty file named done.", file),
			Files:    map[string]string{file: "x\n"},
			Solution: fmt.Sprintf("rm %s && touch done", file),
			Test:     check("deleted", fmt.Sprintf("[ ! -e %s ]", file)) + check("done", "[ -f done ] && [ ! -s done ]")}
	}
}

// FinalReply is the demonstrations' closing message: a reply without a
// tool call, which ends the episode.
const FinalReply = "Done."

// Demonstration is the actions of a correct episode of t, from its
// reference solution: one shell call running t.Solution, then a brief reply
// without a tool call (which ends the episode). It is for SFT warm starts
// (agent.Demonstrate plays it in the real sandbox, and the task's test
// decides whether it is kept).
func Demonstration(t env.Task) ([]chat.Message, error) {
	if strings.TrimSpace(t.Solution) == "" {
		return nil, fmt.Errorf("terminal task %q has no solution to demonstrate", t.ID)
	}
	args, err := env.ToolArguments(map[string]string{"command": t.Solution})
	if err != nil {
		return nil, fmt.Errorf("terminal task %q: %w", t.ID, err)
	}
	return []chat.Message{
		{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{ID: "call1", Type: "function",
			Function: chat.FunctionCall{Name: "shell", Arguments: args}}}},
		{Role: chat.RoleAssistant, Content: FinalReply},
	}, nil
}
