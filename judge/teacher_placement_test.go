package judge

import (
	"reflect"
	"testing"

	"github.com/clawrl/clawrl/chat"
)

// The hint goes after the last user message under HintHeader; with
// system+user also into the system message, made when there is none; with
// system only there, the question as it was asked; the caller's messages
// are left as they were.
func TestTeacherPromptAt(t *testing.T) {
	user := []chat.Message{{Role: chat.RoleUser, Content: "q1"}, {Role: chat.RoleAssistant, Content: "a1"}, {Role: chat.RoleUser, Content: "q2"}}
	withSys := append([]chat.Message{{Role: chat.RoleSystem, Content: "You are terse."}}, user...)
	keep := append([]chat.Message(nil), withSys...)
	for _, tc := range []struct {
		name string
		msgs []chat.Message
		at   HintPlacement
		want []chat.Message
	}{
		{"user", user, HintInUser, []chat.Message{user[0], user[1], {Role: chat.RoleUser, Content: "q2" + HintHeader + "H"}}},
		{"default", user, "", []chat.Message{user[0], user[1], {Role: chat.RoleUser, Content: "q2" + HintHeader + "H"}}},
		{"system+user, no system", user, HintInSystemAndUser, []chat.Message{{Role: chat.RoleSystem, Content: "H"}, user[0], user[1],
			{Role: chat.RoleUser, Content: "q2" + HintHeader + "H"}}},
		{"system+user", withSys, HintInSystemAndUser, []chat.Message{{Role: chat.RoleSystem, Content: "You are terse.\n\nH"}, user[0], user[1],
			{Role: chat.RoleUser, Content: "q2" + HintHeader + "H"}}},
		{"system, no system", user, HintInSystem, []chat.Message{{Role: chat.RoleSystem, Content: "H"}, user[0], user[1], user[2]}},
		{"system", withSys, HintInSystem, []chat.Message{{Role: chat.RoleSystem, Content: "You are terse.\n\nH"}, user[0], user[1], user[2]}},
		{"user-first", withSys, HintBeforeQuestion, []chat.Message{withSys[0], user[0], user[1], {Role: chat.RoleUser, Content: "H" + HintBeforeSep + "q2"}}},
		{"mixed reads as user", withSys, HintMixed, []chat.Message{withSys[0], user[0], user[1], {Role: chat.RoleUser, Content: "q2" + HintHeader + "H"}}},
	} {
		got, err := TeacherPromptAt(tc.msgs, "H", tc.at)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, tc.want)
		}
	}
	if !reflect.DeepEqual(withSys, keep) {
		t.Errorf("the caller's messages changed: %+v", withSys)
	}
	for i, want := range []HintPlacement{HintInUser, HintInSystem, HintInUser, HintInSystem} {
		if got := HintMixed.Writing(i); got != want {
			t.Errorf("mixed writes answer %d under %s, want %s", i, got, want)
		}
		if got := HintInSystem.Writing(i); got != HintInSystem {
			t.Errorf("system writes answer %d under %s", i, got)
		}
	}
	if p, err := ParseHintPlacement("mixed"); err != nil || p != HintMixed {
		t.Errorf("ParseHintPlacement(mixed) = %q, %v", p, err)
	}
	if p, err := ParseHintPlacement("user-first"); err != nil || p != HintBeforeQuestion {
		t.Errorf("ParseHintPlacement(user-first) = %q, %v", p, err)
	}
	if _, err := ParseHintPlacement("assistant"); err == nil {
		t.Error("want an error for an unknown placement")
	}
	for _, at := range []HintPlacement{HintInSystemAndUser, HintInSystem, HintBeforeQuestion} {
		if _, err := TeacherPromptAt([]chat.Message{{Role: chat.RoleSystem, Content: "s"}}, "H", at); err == nil {
			t.Errorf("%s: want an error with no user message", at)
		}
	}
}
