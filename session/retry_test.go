package session

import (
	"testing"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/store"
)

// isRetryOf decides on the request as sent: a store's read-back (empty
// lists for none) equals the request received, and anything the client
// changed, or anything that followed the turn, makes it a new request.
func TestIsRetryOf(t *testing.T) {
	msgs := func() []chat.Message {
		return []chat.Message{system("You are helpful. Time: 10:01."), user("hi"),
			{Role: chat.RoleAssistant, ContentNull: true, ToolCalls: []chat.ToolCall{call("c1", "ls", `{"path":"."}`)}},
			{Role: chat.RoleTool, ToolCallID: "c1", Content: "README.md"}}
	}
	tools := []chat.Tool{{Type: "function", Function: chat.FunctionDef{Name: "ls", Parameters: []byte(`{"type":"object"}`)}}}
	recorded := store.Turn{State: store.Generated, Messages: msgs(), Tools: tools}
	noTools := store.Turn{State: store.Generated, Messages: msgs(), Tools: []chat.Tool{}}
	tests := []struct {
		name string
		last store.Turn
		edit func(*Request)
		want bool
	}{
		{"the same request", recorded, func(*Request) {}, true},
		{"no tools: nil equals the store's empty list", noTools, func(r *Request) { r.Tools = nil }, true},
		{"answered: observed", store.Turn{State: store.Observed, Messages: msgs(), Tools: tools}, func(*Request) {}, false},
		{"expired", store.Turn{State: store.Expired, Messages: msgs(), Tools: tools}, func(*Request) {}, false},
		{"a later system prompt", recorded, func(r *Request) { r.Messages[0].Content = "You are helpful. Time: 10:02." }, false},
		{"one more message", recorded, func(r *Request) { r.Messages = append(r.Messages, user("and?")) }, false},
		{"content sent as \"\" instead of null", recorded, func(r *Request) { r.Messages[2].ContentNull = false }, false},
		{"other tool arguments", recorded, func(r *Request) { r.Messages[2].ToolCalls[0].Function.Arguments = `{"path":"/"}` }, false},
		{"no tools this time", recorded, func(r *Request) { r.Tools = nil }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := Request{Messages: msgs(), Tools: tools}
			tt.edit(&req)
			if got := isRetryOf(&tt.last, req); got != tt.want {
				t.Fatalf("isRetryOf = %v, want %v", got, tt.want)
			}
		})
	}
}
