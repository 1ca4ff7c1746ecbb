package env

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
)

// Task files are JSONL: one Task object per line, blank lines and lines
// starting with "#" skipped. Fields (unknown ones are kept out, not errors,
// so newer files load in older binaries):
//
//	id         unique within the file (required)
//	env        the environment kind: "toolcall" or "terminal" (required)
//	split      "train" or "heldout" (default "train")
//	prompt     what the user asks (required)
//	answer     toolcall: the exact answer (an integer for the shipped math tasks)
//	files      terminal: starting files, relative path → content
//	test       terminal: a shell script printing "ok NAME" / "not ok NAME" per check
//	solution   a reference solution (toolcall: Python printing the answer), for demonstrations; never shown to the agent
//	max_steps  the most actions the agent may take (0: the kind's default)
//	extra      anything a newer kind needs, verbatim
//
// Example lines:
//
//	{"id":"tc-train-0001","env":"toolcall","split":"train","prompt":"Ann has 3 boxes of 12 pens…","answer":"31"}
//	{"id":"term-train-0001","env":"terminal","split":"train","prompt":"Create hello.txt containing hello","files":{},"test":"…"}

// Splits.
const (
	SplitTrain   = "train"
	SplitHeldOut = "heldout"
)

// ExhaustedAfter is how many drawn duplicates in a row tell a task
// generator its prompts are used up. A prompt still missing is far likelier
// than 1 in 10,000 per draw for the shipped generators, so stopping here
// loses none (and never changes what a seed gives); without the bound,
// asking for more tasks than there are prompts looped forever.
const ExhaustedAfter = 1 << 17

// MaxTaskLine bounds one line of a task file.
const MaxTaskLine = 4 << 20

// Check validates a task's required fields and paths.
func (t *Task) Check() error {
	if t.ID == "" {
		return badRequest("task has no id")
	}
	if t.Env == "" {
		return badRequest("task %q has no env", t.ID)
	}
	if strings.TrimSpace(t.Prompt) == "" {
		return badRequest("task %q has no prompt", t.ID)
	}
	if t.Split == "" {
		t.Split = SplitTrain
	}
	if t.MaxSteps < 0 || t.MaxSteps > 1000 {
		return badRequest("task %q: max_steps %d, want 0..1000", t.ID, t.MaxSteps)
	}
	for p := range t.Files {
		if err := CheckRelPath(p); err != nil {
			return badRequest("task %q: file %q: %v", t.ID, p, err)
		}
	}
	return nil
}

// CheckRelPath accepts a clean relative path that stays inside its folder.
func CheckRelPath(p string) error {
	if p == "" || strings.ContainsRune(p, 0) {
		return fmt.Errorf("empty path or NUL byte")
	}
	if path.IsAbs(p) || path.Clean(p) != p || p == "." || p == ".." || strings.HasPrefix(p, "../") {
		return fmt.Errorf("want a clean relative path inside the working folder")
	}
	return nil
}

// ParseTasks reads a JSONL task file.
func ParseTasks(r io.Reader, name string) ([]Task, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), MaxTaskLine)
	var out []Task
	seen := map[string]int{}
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 || b[0] == '#' {
			continue
		}
		var t Task
		if err := json.Unmarshal(b, &t); err != nil {
			return nil, fmt.Errorf("task file %s line %d: %w", name, line, err)
		}
		if err := t.Check(); err != nil {
			return nil, fmt.Errorf("task file %s line %d: %w", name, line, err)
		}
		if prev, dup := seen[t.ID]; dup {
			return nil, fmt.Errorf("task file %s line %d: id %q already on line %d", name, line, t.ID, prev)
		}
		seen[t.ID] = line
		out = append(out, t)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("task file %s: %w", name, err)
	}
	return out, nil
}

// ReadTasks reads a JSONL task file from disk.
func ReadTasks(file string) ([]Task, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("task file: %w", err)
	}
	defer f.Close()
	return ParseTasks(f, file)
}

// WriteTasks writes tasks as JSONL.
func WriteTasks(w io.Writer, tasks []Task) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for i := range tasks {
		if err := enc.Encode(&tasks[i]); err != nil {
			return fmt.Errorf("write task %q: %w", tasks[i].ID, err)
		}
	}
	return nil
}

// FilterSplit keeps the tasks of one split ("" keeps all).
func FilterSplit(tasks []Task, split string) []Task {
	if split == "" {
		return tasks
	}
	var out []Task
	for _, t := range tasks {
		if t.Split == split {
			out = append(out, t)
		}
	}
	return out
}

// ToolArguments encodes a demonstration's tool-call arguments as the JSON
// object a model should write: without json.Marshal's HTML escaping, which
// turned `echo delta > alpha.txt` into `echo delta \u003e alpha.txt` and
// `&&` into `\u0026\u0026`. Warm starts trained on those escapes taught
// the model a six-token spelling of > and &, and sampled episodes derailed
// inside it ("\u0026\u0026\u0026…", invalid arguments: BENCHMARKS.md,
// "Terminal agent: RL from the 15-step warm start").
func ToolArguments(args map[string]string) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(args); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}
