package judge

import (
	"strings"
	"testing"
)

func TestParseTeacherAnswer(t *testing.T) {
	for _, tc := range []struct {
		body, text, finish, err string
	}{
		{`{"choices":[{"message":{"role":"assistant","content":" TL;DR: yes.\n"},"finish_reason":"stop"}]}`, "TL;DR: yes.", "stop", ""},
		{`{"choices":[{"message":{"content":"cut"},"finish_reason":"length"}]}`, "cut", "length", ""},
		// A thinking model's reasoning is never the answer.
		{`{"choices":[{"message":{"content":"","reasoning_content":"hmm"},"finish_reason":"stop"}]}`, "", "", "empty answer"},
		{`{"choices":[{"message":{"content":null},"finish_reason":"stop"}]}`, "", "", "empty answer"},
		{`{"choices":[{"message":{"content":"  \n"}}]}`, "", "", "empty answer"},
		{`{"choices":[]}`, "", "", "no choices"},
		{`{"error":{"message":"model not found"}}`, "", "", "no choices"},
		{`<html>502</html>`, "", "", "invalid character"},
		{``, "", "", "unexpected end"},
	} {
		text, finish, err := ParseTeacherAnswer([]byte(tc.body))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err %v, want %q", tc.body, err, tc.err)
			}
			continue
		}
		if err != nil || text != tc.text || finish != tc.finish {
			t.Errorf("%s: %q %q %v, want %q %q", tc.body, text, finish, err, tc.text, tc.finish)
		}
	}
}

// FuzzParseTeacherAnswer: any body from a teacher server gives an answer
// or an error, never a panic, and an answer is never blank.
func FuzzParseTeacherAnswer(f *testing.F) {
	f.Add([]byte(`{"choices":[{"message":{"content":"hi"},"finish_reason":"stop"}]}`))
	f.Add([]byte(`{"choices":[{"message":{"content":null}}]}`))
	f.Add([]byte(`{"choices":[{}]}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		text, _, err := ParseTeacherAnswer(body)
		if err == nil && strings.TrimSpace(text) == "" {
			t.Fatalf("blank answer from %q", body)
		}
	})
}
