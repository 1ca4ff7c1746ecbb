package api

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// FuzzFeedback: any body to /v1/feedback is recorded (200) or refused in the
// API's error shape as the client's fault (400, 404, 409, 413), never a
// server error, and what is recorded is a rating of ±1 or written feedback.
// "$ID" in a body stands for a real completion's id.
func FuzzFeedback(f *testing.F) {
	ts := newTestServer(f, serverOptions{})
	id := ts.complete(f, map[string]any{"messages": []any{user("hi")}}, "session_id", "fuzz-1:0").ID
	for _, b := range []string{
		`{"id":"$ID","rating":1}`, `{"id":"$ID","rating":-1,"text":"too long"}`, `{"id":"$ID","rating":0}`,
		`{"id":"$ID","rating":0,"text":"  "}`, `{"id":"$ID","text":"plainer"}`, `{"session_id":"fuzz-1:4","rating":1}`,
		`{"id":"$ID","rating":2}`, `{"id":"$ID","rating":null}`, `{"id":"$ID","rating":"1"}`, `{"id":"nope","rating":1}`, `[]`, ``,
	} {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body string) {
		body = strings.ReplaceAll(body, "$ID", id)
		resp := ts.post(t, "/v1/feedback", body)
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusOK:
		case http.StatusBadRequest, http.StatusNotFound, http.StatusConflict, http.StatusRequestEntityTooLarge:
			var e struct {
				Error *Error `json:"error"`
			}
			if json.Unmarshal(raw, &e) != nil || e.Error == nil || e.Error.Message == "" {
				t.Fatalf("status %d without the API's error shape: %s", resp.StatusCode, raw)
			}
			return
		default:
			t.Fatalf("body %q: status %d: %s", body, resp.StatusCode, raw)
		}
		var ok struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(raw, &ok); err != nil {
			t.Fatalf("200 with %s", raw)
		}
		turn, err := ts.store.Turn(context.Background(), ok.ID)
		if err != nil {
			t.Fatal(err)
		}
		fb := turn.Feedback
		if fb == nil || fb.Rating < -1 || fb.Rating > 1 || (fb.Rating == 0 && strings.TrimSpace(fb.Text) == "") {
			t.Fatalf("recorded feedback %+v from %q", fb, body)
		}
	})
}
