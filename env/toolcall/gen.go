package toolcall

import (
	"fmt"
	"github.com/clawrl/clawrl/chat"
	"math/rand/v2"

	"github.com/clawrl/clawrl/env"
)

// Generate makes n math word problems from seed, each with its exact
// integer answer. Problems range from one operation on small numbers (which
// a small model can learn to get right) to three-step ones with large
// numbers (where running code pays). The same seed gives the same tasks.
// When n exceeds the distinct problems it returns those it found, fewer
// than n, rather than looping.
func Generate(n int, seed uint64, split, idPrefix string) []env.Task {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	out := make([]env.Task, 0, n)
	seen := map[string]bool{}
	for misses := 0; len(out) < n && misses < env.ExhaustedAfter; {
		p, a, code := problem(r)
		if seen[p] {
			misses++
			continue
		}
		misses = 0
		seen[p] = true
		out = append(out, env.Task{ID: fmt.Sprintf("%s-%04d", idPrefix, len(out)+1), Env: Name, Split: split, Prompt: p,
			Answer: fmt.Sprint(a), Solution: code})
	}
	return out
}

var (
	names = []string{"Ann", "Ben", "Carla", "Dev", "Eli", "Fatima", "Gus", "Hana", "Ivan", "Jun", "Kofi", "Lena"}
	items = []string{"apples", "pencils", "stickers", "marbles", "books", "cookies", "cards", "shells"}
)

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func between(r *rand.Rand, lo, hi int) int { return lo + r.IntN(hi-lo+1) }

// problem draws one problem, its answer and Python code that prints the
// answer (the task's reference solution, for demonstrations).
func problem(r *rand.Rand) (string, int, string) {
	name, item := pick(r, names), pick(r, items)
	switch r.IntN(8) {
	case 0:
		a, b := between(r, 2, 30), between(r, 2, 30)
		return fmt.Sprintf("%s has %d %s and finds %d more. How many %s does %s have now?", name, a, item, b, item, name), a + b, fmt.Sprintf("print(%d + %d)", a, b)
	case 1:
		a := between(r, 20, 60)
		b := between(r, 1, a-1)
		return fmt.Sprintf("%s had %d %s and gave away %d. How many %s are left?", name, a, item, b, item), a - b, fmt.Sprintf("print(%d - %d)", a, b)
	case 2:
		a, b := between(r, 2, 12), between(r, 2, 12)
		return fmt.Sprintf("There are %d boxes with %d %s in each box. How many %s are there in total?", a, b, item, item), a * b, fmt.Sprintf("print(%d * %d)", a, b)
	case 3:
		b, q := between(r, 2, 9), between(r, 2, 15)
		return fmt.Sprintf("%s shares %d %s equally among %d friends. How many %s does each friend get?", name, b*q, item, b, item), q, fmt.Sprintf("print(%d // %d)", b*q, b)
	case 4:
		a, b, c := between(r, 3, 20), between(r, 3, 20), between(r, 2, 40)
		return fmt.Sprintf("A shelf has %d rows of %d %s. %s adds %d more %s. How many %s are on the shelf?", a, b, item, name, c, item, item), a*b + c, fmt.Sprintf("print(%d * %d + %d)", a, b, c)
	case 5:
		price, count := between(r, 2, 19), between(r, 2, 9)
		bill := (price*count/10 + 1 + r.IntN(3)) * 10
		return fmt.Sprintf("%s buys %d %s at $%d each and pays with $%d. How many dollars of change does %s get?", name, count, item, price, bill, name), bill - price*count, fmt.Sprintf("print(%d - %d * %d)", bill, count, price)
	case 6:
		a, b := between(r, 101, 999), between(r, 11, 99)
		return fmt.Sprintf("A factory packs %d %s into each of %d crates. How many %s does it pack?", b, item, a, item), a * b, fmt.Sprintf("print(%d * %d)", b, a)
	default:
		a, b, c := between(r, 1000, 9999), between(r, 100, 999), between(r, 12, 97)
		return fmt.Sprintf("A warehouse holds %d %s. It ships %d crates of %d %s each. How many %s remain?", a*c, item, b, c, item, item), a*c - b*c, fmt.Sprintf("print(%d - %d * %d)", a*c, b, c)
	}
}

// Demonstration is the actions of a correct episode of t, from its
// reference solution: one python call running t.Solution, then the answer
// as \boxed{…}. It is for SFT warm starts (agent.Demonstrate plays it in
// the real environment, which checks it).
func Demonstration(t env.Task) ([]chat.Message, error) {
	if t.Solution == "" || t.Answer == "" {
		return nil, fmt.Errorf("toolcall task %q has no solution or answer to demonstrate", t.ID)
	}
	args, err := env.ToolArguments(map[string]string{"code": t.Solution})
	if err != nil {
		return nil, fmt.Errorf("toolcall task %q: %w", t.ID, err)
	}
	return []chat.Message{
		{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{ID: "call1", Type: "function",
			Function: chat.FunctionCall{Name: "python", Arguments: args}}}},
		{Role: chat.RoleAssistant, Content: `\boxed{` + t.Answer + `}`},
	}, nil
}
