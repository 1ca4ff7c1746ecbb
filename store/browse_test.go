package store

import "testing"

func TestSessionName(t *testing.T) {
	cases := []struct {
		s            Session
		client, name string
	}{
		{Session{ID: "sess-1", Key: "demo", KeySource: "header"}, "demo", "demo"},
		{Session{ID: "sess-2", Key: "oc-123", KeySource: "affinity"}, "oc-123", "oc-123"},
		{Session{ID: "sess-3", Key: "user:alice", KeySource: "user"}, "alice", "alice"},
		{Session{ID: "sess-4", Key: "user:bob", KeySource: "header"}, "user:bob", "user:bob"},
		{Session{ID: "sess-5", Key: "anon:XYZ", KeySource: "new"}, "", "sess-5"},
		{Session{ID: "sess-6", KeySource: "history"}, "", "sess-6"},
	}
	for _, c := range cases {
		if got := c.s.ClientID(); got != c.client {
			t.Errorf("%+v.ClientID() = %q, want %q", c.s, got, c.client)
		}
		if got := c.s.Name(); got != c.name {
			t.Errorf("%+v.Name() = %q, want %q", c.s, got, c.name)
		}
	}
}
