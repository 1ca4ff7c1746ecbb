package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/clawrl/clawrl/judge"
)

// TestMeasureTeacherRevises: under judge.HintAsRevision, bench teacher asks
// each held-out prompt twice: first alone (the model's own greedy answer, no
// feedback), then the conversation with that answer as the assistant's turn
// and the written feedback as the user's next message; the second answer is
// the one scored. The fake server here writes a real answer plus the
// sign-off only when it is asked a revision of exactly its own answer.
func TestMeasureTeacherRevises(t *testing.T) {
	var p *Persona
	for _, q := range Personas() {
		if q.Name == "signoff" {
			p = q
		}
	}
	own := func(q string) string { return fmt.Sprintf("My long answer to a question of %d bytes.", len(q)) }
	var mu sync.Mutex
	asked := map[int]int{} // requests by number of messages
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages    []Message `json:"messages"`
			Temperature float64   `json:"temperature"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Temperature != 0 {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		mu.Lock()
		asked[len(req.Messages)]++
		mu.Unlock()
		m := req.Messages
		text := own(m[0].Content)
		if len(m) == 3 && m[1].Role == "assistant" && m[1].Content == own(m[0].Content) && m[2].Role == "user" && m[2].Content == p.Critique {
			text = "Boil it for nine minutes. Hope this helps!"
		}
		json.NewEncoder(w).Encode(map[string]any{"id": "x", "choices": []any{map[string]any{
			"message": map[string]any{"role": "assistant", "content": text}, "finish_reason": "stop"}}})
	}))
	defer srv.Close()
	cl := &Client{BaseURL: srv.URL}
	for _, plain := range []bool{true, false} {
		clear(asked)
		r, err := MeasureTeacher(context.Background(), cl, p, CeilingConfig{Prompts: 5, MaxTokens: 64, Concurrency: 2,
			Placement: judge.HintAsRevision, Plain: plain})
		if err != nil {
			t.Fatal(err)
		}
		if r.WithHint != 5 || r.Plain != 0 || asked[1] != 5 || asked[3] != 5 || len(asked) != 2 {
			t.Errorf("plain %v: %d/5 revisions satisfied, %d plain; requests by length %v: want 5 plain answers then 5 revisions, all satisfied", plain, r.WithHint, r.Plain, asked)
		}
		if plain && (len(r.Students) != 5 || !strings.HasPrefix(r.Students[0], "My long answer")) {
			t.Errorf("the student's answers: %q", r.Students)
		}
	}
	// With a student server, its answers are the ones revised (and the
	// plain column): a teacher server that knows only its own answers
	// revises a stranger's with no sign-off here.
	stranger := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"id": "y", "choices": []any{map[string]any{
			"message": map[string]any{"role": "assistant", "content": "A stranger's answer."}, "finish_reason": "stop"}}})
	}))
	defer stranger.Close()
	clear(asked)
	r, err := MeasureTeacher(context.Background(), cl, p, CeilingConfig{Prompts: 5, MaxTokens: 64, Concurrency: 2,
		Placement: judge.HintAsRevision, Student: &Client{BaseURL: stranger.URL}})
	if err != nil || r.WithHint != 0 || r.PlainAsked != 5 || asked[3] != 5 || asked[1] != 0 || len(r.Students) != 5 || r.Students[0] != "A stranger's answer." {
		t.Errorf("student server: %+v %v, teacher requests %v: want 5 revisions of the student's answers only", r, err, asked)
	}
	if _, err := MeasureTeacher(context.Background(), cl, p, CeilingConfig{Prompts: 1, MaxTokens: 64, Placement: judge.HintAsContinuation}); err == nil {
		t.Error("continue cannot be asked over the chat API: want an error")
	}
	// The loop's default placement never shows the answer.
	clear(asked)
	r, err = MeasureTeacher(context.Background(), cl, p, CeilingConfig{Prompts: 5, MaxTokens: 64, Concurrency: 2, Placement: judge.HintInUser})
	if err != nil || r.WithHint != 0 || asked[1] != 5 || len(asked) != 1 {
		t.Errorf("user placement: %+v %v, requests %v", r, err, asked)
	}
}
