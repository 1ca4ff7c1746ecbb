package session

import (
	"net/http"
	"strings"
	"testing"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/store"
)

func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

func TestIdentifyPrecedence(t *testing.T) {
	tests := []struct {
		name  string
		hints Hints
		want  Identity
		ok    bool
	}{
		{"nothing", Hints{Header: hdr()}, Identity{}, false},
		{"X-Session-Id wins over all", Hints{Header: hdr("X-Session-Id", "a", "session_id", "b:1", "x-session-affinity", "c:2"), SessionID: "d", PromptCacheKey: "e:3", User: "f"},
			Identity{Key: "a", Source: SourceHeader, Epoch: -1}, true},
		{"session_id header with epoch", Hints{Header: hdr("session_id", "b:4", "x-session-affinity", "c:2"), SessionID: "d"},
			Identity{Key: "b", Source: SourceAffinity, Epoch: 4}, true},
		{"x-session-affinity", Hints{Header: hdr("x-session-affinity", "c:2"), SessionID: "d"},
			Identity{Key: "c", Source: SourceAffinity, Epoch: 2}, true},
		{"body session_id verbatim", Hints{Header: hdr(), SessionID: "d:7", PromptCacheKey: "e:3", User: "f"},
			Identity{Key: "d:7", Source: SourceBodySessionID, Epoch: -1}, true},
		{"prompt_cache_key with epoch", Hints{Header: hdr(), PromptCacheKey: "e:3", User: "f"},
			Identity{Key: "e", Source: SourcePromptCacheKey, Epoch: 3}, true},
		{"prompt_cache_key without epoch", Hints{Header: hdr(), PromptCacheKey: "sess:abc"},
			Identity{Key: "sess:abc", Source: SourcePromptCacheKey, Epoch: -1}, true},
		{"user", Hints{Header: hdr(), User: "alice"}, Identity{Key: "user:alice", Source: SourceUser, Epoch: -1}, true},
		{"blank values skipped", Hints{Header: hdr("X-Session-Id", "  "), SessionID: "", User: "bob"}, Identity{Key: "user:bob", Source: SourceUser, Epoch: -1}, true},
		{"uuid with colon epoch", Hints{Header: hdr("session_id", "0b7c-11:0")}, Identity{Key: "0b7c-11", Source: SourceAffinity}, true},
		{"negative epoch is part of the id", Hints{Header: hdr("session_id", "x:-1")}, Identity{Key: "x:-1", Source: SourceAffinity, Epoch: -1}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, err := Identify(tt.hints)
			if err != nil {
				t.Fatal(err)
			}
			if ok != tt.ok || got != tt.want {
				t.Fatalf("Identify = %+v %v, want %+v %v", got, ok, tt.want, tt.ok)
			}
		})
	}
	if _, _, err := Identify(Hints{Header: hdr(), SessionID: strings.Repeat("x", maxKeyLen+1)}); err == nil {
		t.Fatal("an oversized session id was accepted")
	}
}

func user(s string) chat.Message   { return chat.Message{Role: chat.RoleUser, Content: s} }
func system(s string) chat.Message { return chat.Message{Role: chat.RoleSystem, Content: s} }

func TestClassify(t *testing.T) {
	tool := []chat.Tool{{Type: "function", Function: chat.FunctionDef{Name: "read"}}}
	tests := []struct {
		name   string
		hints  Hints
		msgs   []chat.Message
		tools  []chat.Tool
		want   store.TurnType
		reason string
	}{
		{"plain chat is main", Hints{}, []chat.Message{system("You are helpful."), user("hi")}, nil, store.Main, ReasonDefault},
		{"header side", Hints{Header: hdr("X-Turn-Type", "side")}, []chat.Message{user("hi")}, nil, store.Side, ReasonExplicit},
		{"body main overrides content", Hints{TurnType: "MAIN"}, []chat.Message{system("Summarize the conversation."), user("x")}, nil, store.Main, ReasonExplicit},
		{"header beats body", Hints{Header: hdr("X-Turn-Type", "main"), TurnType: "side"}, []chat.Message{user("hi")}, nil, store.Main, ReasonExplicit},
		{"compaction", Hints{}, []chat.Message{system("You are a context summarization assistant. Summarize the conversation history."), user("<conversation>…</conversation>")}, nil, store.Side, ReasonCompaction},
		{"summary request without system", Hints{}, []chat.Message{user("Summarize the conversation above into a checkpoint.")}, nil, store.Side, ReasonCompaction},
		{"user asks for a summary of an article is main", Hints{}, []chat.Message{system("You are helpful."), user("Summarize this article: …")}, nil, store.Main, ReasonDefault},
		{"summarising system prompt with tools is main", Hints{}, []chat.Message{system("Summarize files when asked."), user("hi")}, tool, store.Main, ReasonDefault},
		{"heartbeat", Hints{}, []chat.Message{system("agent"), user("Read HEARTBEAT.md if it exists. If nothing needs attention, reply HEARTBEAT_OK."), user(OpenClawInternalContext + "\n…")}, tool, store.Side, ReasonHeartbeat},
		{"heartbeat NO_REPLY", Hints{}, []chat.Message{user("Follow the heartbeat monitor context. Reply NO_REPLY when idle.")}, tool, store.Side, ReasonHeartbeat},
		{"heartbeat words only in system is main", Hints{}, []chat.Message{system("On heartbeat polls reply HEARTBEAT_OK."), user("fix my code")}, tool, store.Main, ReasonDefault},
		{"title", Hints{}, []chat.Message{system("Generate a short title for this conversation."), user("hello")}, nil, store.Side, ReasonTitle},
		{"memory flush", Hints{}, []chat.Message{user("Pre-compaction memory flush. Store durable memories now.")}, tool, store.Side, ReasonMemory},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.hints.Header == nil {
				tt.hints.Header = hdr()
			}
			got, reason, err := Classify(tt.hints, tt.msgs, tt.tools)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want || reason != tt.reason {
				t.Fatalf("Classify = %s (%s), want %s (%s)", got, reason, tt.want, tt.reason)
			}
		})
	}
	if _, _, err := Classify(Hints{Header: hdr("X-Turn-Type", "primary")}, nil, nil); err == nil {
		t.Fatal("an unknown turn type was accepted")
	}
}

func call(id, name, args string) chat.ToolCall {
	return chat.ToolCall{ID: id, Type: "function", Function: chat.FunctionCall{Name: name, Arguments: args}}
}

// A client's next request must match the recorded turn even though it
// rewrites what clients rewrite.
func TestAnchorsMatchEchoedHistory(t *testing.T) {
	request := []chat.Message{system("You are an agent. Time: 10:00"), user("list files"), user(OpenClawInternalContext + " ctx 1")}
	response := chat.Message{Role: chat.RoleAssistant, ReasoningContent: "I should call ls", ToolCalls: []chat.ToolCall{call("callAbC123", "ls", `{"path": ".", "all": true}`)}}
	turn := TurnHash(request, response)

	echoes := []struct {
		name string
		echo chat.Message
		same bool
	}{
		{"content null, no reasoning", chat.Message{Role: chat.RoleAssistant, ContentNull: true, ToolCalls: []chat.ToolCall{call("callAbC123", "ls", `{"path": ".", "all": true}`)}}, true},
		{"ids rewritten, args reformatted", chat.Message{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{call("callAbC123x", "ls", `{"all":true,"path":"."}`)}}, true},
		{"reasoning echoed", response, true},
		{"different args", chat.Message{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{call("c", "ls", `{"path":".."}`)}}, false},
		{"different tool", chat.Message{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{call("c", "cat", `{"path": ".", "all": true}`)}}, false},
	}
	for _, e := range echoes {
		t.Run(e.name, func(t *testing.T) {
			next := []chat.Message{system("You are an agent. Time: 10:01"), user("list files"), e.echo,
				{Role: chat.RoleTool, ToolCallID: "callAbC123", Content: "a b"}, user(OpenClawInternalContext + " ctx 2")}
			anchors := Anchors(next)
			if len(anchors) != 1 || anchors[0].Index != 2 {
				t.Fatalf("anchors %+v, want one at index 2", anchors)
			}
			if (anchors[0].Hash == turn) != e.same {
				t.Fatalf("anchor matches turn: %v, want %v", anchors[0].Hash == turn, e.same)
			}
			ns, kind := NextState(next, anchors[0].Index)
			if kind != store.NextTool || len(ns) != 1 || ns[0].Content != "a b" {
				t.Fatalf("next state %+v (%s)", ns, kind)
			}
		})
	}
}

func TestAnchorsLatestFirstAndNextState(t *testing.T) {
	a1 := chat.Message{Role: chat.RoleAssistant, Content: "one"}
	a2 := chat.Message{Role: chat.RoleAssistant, Content: ""}
	msgs := []chat.Message{user("q1"), a1, user("q2"), a2, user("thanks"), user(OpenClawInternalContext)}
	an := Anchors(msgs)
	if len(an) != 2 || an[0].Index != 3 || an[1].Index != 1 {
		t.Fatalf("anchors %+v", an)
	}
	if an[1].Hash != TurnHash([]chat.Message{user("q1")}, a1) {
		t.Fatal("first anchor does not match the first turn's hash")
	}
	if an[0].Hash != TurnHash(msgs[:3], chat.Message{Role: chat.RoleAssistant, ContentNull: true}) {
		t.Fatal("second anchor does not match the second turn's hash")
	}
	ns, kind := NextState(msgs, 1)
	if kind != store.NextUser || len(ns) != 1 || ns[0].Content != "q2" {
		t.Fatalf("next state of turn 1: %+v %s", ns, kind)
	}
	ns, kind = NextState(msgs, 3)
	if kind != store.NextUser || len(ns) != 1 || ns[0].Content != "thanks" {
		t.Fatalf("next state of turn 2: %+v %s", ns, kind)
	}
	if ns, _ := NextState([]chat.Message{user("x"), a1}, 1); ns != nil {
		t.Fatalf("nothing followed, got %+v", ns)
	}
}

// FuzzMatcher feeds arbitrary identities and conversations to the session
// matcher: it must never panic, and its hashes must be stable.
func FuzzMatcher(f *testing.F) {
	f.Add("s:1", "k:2", "u", "main", "hi", "ok", `{"a":1}`, "tool out")
	f.Add("", "", "", "", OpenClawInternalContext, "", "not json", "")
	f.Fuzz(func(t *testing.T, affinity, cacheKey, usr, turnType, userText, answer, args, toolOut string) {
		h := Hints{Header: hdr("session_id", affinity), PromptCacheKey: cacheKey, User: usr, TurnType: turnType}
		Identify(h)
		msgs := []chat.Message{user(userText), {Role: chat.RoleAssistant, Content: answer, ToolCalls: []chat.ToolCall{call("c1", "f", args)}},
			{Role: chat.RoleTool, ToolCallID: "c1", Content: toolOut}}
		Classify(h, msgs, nil)
		an := Anchors(msgs)
		if len(an) != 1 || an[0].Hash != TurnHash(msgs[:1], msgs[1]) {
			t.Fatalf("anchor %+v does not match the turn hash", an)
		}
		NextState(msgs, an[0].Index)
	})
}

// The hash Begin takes of a request's history, continued with the response,
// must be the hash the next request's anchor computes for that response:
// that is what pairs the two.
func TestHistoryContinuesToTheNextAnchor(t *testing.T) {
	resp := chat.Message{Role: chat.RoleAssistant, Content: "done", ToolCalls: []chat.ToolCall{call("c1", "ls", `{"b":1, "a":2}`)}}
	tests := []struct {
		name    string
		request []chat.Message
	}{
		{"empty", nil},
		{"system only", []chat.Message{system("sys")}},
		{"one user", []chat.Message{user("hi")}},
		{"tool round", []chat.Message{system("sys"), user("list"), {Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{call("c0", "ls", `{}`)}},
			{Role: chat.RoleTool, ToolCallID: "c0", Content: "a b"}, user(OpenClawInternalContext + " ctx")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, history := anchorsAndHistory(tt.request)
			if !history.Valid() || history != HashHistory(tt.request) {
				t.Fatalf("history from anchors %x, HashHistory %x", history.sum, HashHistory(tt.request).sum)
			}
			next := append(append([]chat.Message{}, tt.request...), resp, user("thanks"))
			an := Anchors(next)
			if len(an) == 0 || an[0].Index != len(tt.request) {
				t.Fatalf("anchors %+v: want the response at %d first", an, len(tt.request))
			}
			if got := history.TurnHash(resp); got != an[0].Hash {
				t.Errorf("History.TurnHash = %s, next request's anchor %s", got, an[0].Hash)
			}
			if got := TurnHash(tt.request, resp); got != an[0].Hash {
				t.Errorf("TurnHash = %s, next request's anchor %s", got, an[0].Hash)
			}
		})
	}
	if (History{}).Valid() {
		t.Error("the zero History is valid")
	}
}
