package judge

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/engine/native"
	"github.com/clawrl/clawrl/model"
	"github.com/clawrl/clawrl/tokenizer/vocab"
)

// Under revise the teacher sees the conversation, the student's answer as
// the assistant's turn and the hint as the user's next message, with no
// HintHeader; the other placements ignore the answer; the caller's
// messages are left as they were.
func TestTeacherPromptAfter(t *testing.T) {
	msgs := []chat.Message{{Role: chat.RoleSystem, Content: "s"}, {Role: chat.RoleUser, Content: "q"}}
	keep := append([]chat.Message(nil), msgs...)
	answer := chat.Message{Content: "a long answer"} // no role: it is the assistant's
	got, err := TeacherPromptAfter(msgs, answer, "H", HintAsRevision)
	if err != nil {
		t.Fatal(err)
	}
	want := []chat.Message{msgs[0], msgs[1], {Role: chat.RoleAssistant, Content: "a long answer"}, {Role: chat.RoleUser, Content: "H"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("revise:\n got %+v\nwant %+v", got, want)
	}
	for _, at := range []HintPlacement{HintInUser, HintInSystemAndUser, HintAsContinuation} {
		got, err := TeacherPromptAfter(msgs, answer, "H", at)
		want, _ := TeacherPromptAt(msgs, "H", at)
		if at == HintAsContinuation {
			want, _ = TeacherPromptAt(msgs, "H", HintInUser) // the answer is continued, not shown
		}
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %+v (%v), want TeacherPromptAt's %+v", at, got, err, want)
		}
	}
	if !reflect.DeepEqual(msgs, keep) {
		t.Errorf("the caller's messages changed: %+v", msgs)
	}
	for s, want := range map[string]HintPlacement{"revise": HintAsRevision, "continue": HintAsContinuation} {
		if p, err := ParseHintPlacement(s); err != nil || p != want {
			t.Errorf("ParseHintPlacement(%s) = %q, %v", s, p, err)
		}
	}
	if _, err := TeacherPromptAt(msgs, "H", HintAsRevision); err == nil {
		t.Error("TeacherPromptAt under revise has no answer to show: want an error")
	}
	for _, bad := range [][]chat.Message{nil, {{Role: chat.RoleUser, Content: "q"}, {Role: chat.RoleAssistant, Content: "prefill"}}} {
		if _, err := TeacherPromptAfter(bad, answer, "H", HintAsRevision); err == nil {
			t.Errorf("%+v: want an error (nothing for the answer to reply to)", bad)
		}
	}
}

// formatOnly is an engine with a real Format and nothing else: Teacher.Prompt
// only renders and tokenizes.
type formatOnly struct {
	engine.Engine
	f engine.Format
}

func (e formatOnly) Format() engine.Format { return e.f }

// The revise teacher's prompt, rendered through the real Qwen2.5 tokenizer
// and chat template, is exactly what transformers' apply_chat_template
// renders for the conversation with the answer and the hint as the next
// turns, and tokenizes to the same ids (testdata/gen_revise_prompt.py).
// The original prompt text does not change it (no splice under revise).
func TestRevisePromptRendered(t *testing.T) {
	dir := t.TempDir()
	if err := vocab.Write("qwen2", dir); err != nil {
		t.Fatal(err)
	}
	f, err := native.LoadFormat(dir, &model.Config{})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join("testdata", "revise_prompt_qwen2.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Name     string         `json:"name"`
		Messages []chat.Message `json:"messages"`
		Answer   string         `json:"answer"`
		Hint     string         `json:"hint"`
		WantText string         `json:"want_text"`
		WantIDs  []int32        `json:"want_ids"`
	}
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatal("no cases in the fixture")
	}
	teacher := &Teacher{Engine: formatOnly{f: f}, Placement: HintAsRevision}
	for _, c := range cases {
		// What the student was asked, rendered as the gateway renders it.
		orig, err := f.Render(c.Messages, nil, chat.RenderOptions{AddGenerationPrompt: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, promptText := range []string{"", orig, orig + "(rendered with other options)"} {
			got, err := teacher.WithAnswer(chat.Message{Role: chat.RoleAssistant, Content: c.Answer}, nil).Prompt(c.Messages, nil, promptText, c.Hint)
			if err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
			if got != c.WantText {
				t.Errorf("%s (prompt text %d bytes):\n got %q\nwant %q", c.Name, len(promptText), got, c.WantText)
			}
		}
		if ids := f.Encode(c.WantText); !reflect.DeepEqual(ids, c.WantIDs) {
			t.Errorf("%s: ids\n got %v\nwant %v", c.Name, ids, c.WantIDs)
		}
	}
	// Without the answer the revise teacher cannot build its prompt.
	if _, err := teacher.Prompt(cases[0].Messages, nil, "", cases[0].Hint); err == nil {
		t.Error("revise teacher with no answer: want an error")
	}
}
