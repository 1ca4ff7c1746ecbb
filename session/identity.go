// Package session decides which conversation a request belongs to, whether
// its turn is trained (main) or only served (side), and which earlier turn the
// request's history answers (next-state pairing). It speaks chat and store
// types only; the HTTP layer hands it what the request said.
package session

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Where an identity came from (store.Session.KeySource).
const (
	SourceHeader         = "header"           // X-Session-Id
	SourceAffinity       = "affinity"         // session_id / x-session-affinity headers
	SourceBodySessionID  = "session_id"       // body session_id
	SourcePromptCacheKey = "prompt_cache_key" // body prompt_cache_key
	SourceUser           = "user"             // body user
	SourceHistory        = "history"          // the request extends a recorded turn
	SourceNew            = "new"              // nothing matched
)

// maxKeyLen bounds identities taken from the outside.
const maxKeyLen = 512

// Hints are what a request says about its conversation, in its headers and
// body fields.
type Hints struct {
	Header         http.Header
	SessionID      string // body session_id
	PromptCacheKey string // body prompt_cache_key
	User           string // body user
	TurnType       string // body turn_type
}

// Identity is an explicit conversation identity.
type Identity struct {
	Key    string // the store key (the conversation id; "user:<name>" for body user)
	Source string
	Epoch  int // OpenClaw's compaction count from <id>:<n>; -1 when the value names none
}

// Identify applies DESIGN.md's precedence: header X-Session-Id; header
// session_id or x-session-affinity (<id>:<n>); body session_id; body
// prompt_cache_key (<id>:<n>); body user. ok is false when none is present:
// the caller falls back to history matching.
func Identify(h Hints) (id Identity, ok bool, err error) {
	type step struct {
		value    string
		source   string
		affinity bool // value may be <id>:<compactionCount>
		prefix   string
	}
	steps := []step{
		{value: h.Header.Get("X-Session-Id"), source: SourceHeader},
		{value: h.Header.Get("session_id"), source: SourceAffinity, affinity: true},
		{value: h.Header.Get("X-Session-Affinity"), source: SourceAffinity, affinity: true},
		{value: h.SessionID, source: SourceBodySessionID},
		{value: h.PromptCacheKey, source: SourcePromptCacheKey, affinity: true},
		// A user names a person, not a conversation id: keep the two apart.
		{value: h.User, source: SourceUser, prefix: "user:"},
	}
	for _, s := range steps {
		v := strings.TrimSpace(s.value)
		if v == "" {
			continue
		}
		if len(v) > maxKeyLen || !utf8.ValidString(v) {
			return Identity{}, false, fmt.Errorf("session identity from %s: %d bytes, want valid UTF-8 of at most %d", s.source, len(v), maxKeyLen)
		}
		epoch := -1
		if s.affinity {
			v, epoch = splitAffinity(v)
		}
		if v == "" {
			continue
		}
		return Identity{Key: s.prefix + v, Source: s.source, Epoch: epoch}, true, nil
	}
	return Identity{}, false, nil
}

// splitAffinity splits OpenClaw's "<id>:<compactionCount>". A value without
// a numeric suffix is an id as a whole and names no epoch (-1): OpenClaw's
// compaction request itself is sent as the bare id, and must not move the
// session's epoch.
func splitAffinity(v string) (string, int) {
	i := strings.LastIndexByte(v, ':')
	if i < 0 || i == len(v)-1 {
		return v, -1
	}
	n, err := strconv.Atoi(v[i+1:])
	if err != nil || n < 0 || strings.ContainsAny(v[i+1:], "+-") {
		return v, -1
	}
	return v[:i], n
}
