package session

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"hash"
	"strings"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/store"
)

// OpenClawInternalContext opens the block OpenClaw appends as a last user
// message on every request and never keeps in later history.
const OpenClawInternalContext = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>"

func isInternalContext(m chat.Message) bool {
	return m.Role == chat.RoleUser && strings.HasPrefix(strings.TrimSpace(m.Content), OpenClawInternalContext)
}

// A conversation hash identifies a conversation's messages after
// normalisation, so that a later request whose history repeats a recorded
// turn's request and response can be matched to that turn. Normalisation
// keeps what a client echoes faithfully and drops what clients rewrite:
//
//   - system and developer messages are dropped: agents rebuild them on every
//     request (OpenClaw's carries the time, skills and workspace files);
//   - OpenClaw's internal context block is dropped (never kept in history);
//   - content is trimmed, and null content equals "" (OpenClaw sends null for
//     tool-call rounds, others send "");
//   - reasoning is dropped (most clients do not send it back);
//   - tool-call ids and tool_call_id are dropped (OpenClaw strips their
//     non-alphanumeric characters), names and arguments are kept, arguments
//     canonicalised as JSON (key order, whitespace);
//   - message name fields are dropped.
type hasher struct {
	h   hash.Hash
	sum []byte
	buf []byte
}

const hashDomain = "clawrl conversation v1"

func newHasher() *hasher {
	s := sha256.Sum256([]byte(hashDomain))
	return &hasher{h: sha256.New(), sum: s[:]}
}

// keep says whether a message takes part in the hash.
func keep(m chat.Message) bool {
	switch m.Role {
	case chat.RoleSystem, chat.RoleDeveloper:
		return false
	}
	return !isInternalContext(m)
}

// add folds one (kept) message into the running hash: h' = sha256(h ‖ m).
func (x *hasher) add(m chat.Message) {
	b := x.buf[:0]
	field := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	field(m.Role)
	field(strings.TrimSpace(m.Content))
	if m.Role == chat.RoleAssistant {
		b = binary.AppendUvarint(b, uint64(len(m.ToolCalls)))
		for _, tc := range m.ToolCalls {
			field(tc.Function.Name)
			field(canonicalArgs(tc.Function.Arguments))
		}
	}
	x.h.Reset()
	x.h.Write(x.sum)
	x.h.Write(b)
	x.sum = x.h.Sum(x.sum[:0])
	x.buf = b
}

func (x *hasher) hex() string { return hex.EncodeToString(x.sum) }

// canonicalArgs re-encodes JSON arguments with sorted keys and no
// insignificant whitespace; text that is not JSON is only trimmed.
func canonicalArgs(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return "{}"
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return s
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return s
	}
	return strings.TrimSuffix(out.String(), "\n")
}

// TurnHash is the conversation hash of a turn: its request messages followed
// by its response.
func TurnHash(request []chat.Message, response chat.Message) string {
	return HashHistory(request).TurnHash(response)
}

// History is the conversation hash's state after a request's messages. The
// hash is a chain, so a turn's hash continues from it with the response: a
// request's history (the long part) is hashed once, by Begin, not again
// when the turn is recorded.
type History struct {
	sum   [sha256.Size]byte
	valid bool
}

// HashHistory hashes a request's messages.
func HashHistory(request []chat.Message) History {
	x := newHasher()
	for _, m := range request {
		if keep(m) {
			x.add(m)
		}
	}
	return x.history()
}

func (x *hasher) history() History {
	h := History{valid: true}
	copy(h.sum[:], x.sum)
	return h
}

// Valid reports whether h came from hashing a history (the zero History
// did not).
func (h History) Valid() bool { return h.valid }

// TurnHash is the conversation hash of the turn answering this history
// with response: TurnHash(request, response) without re-reading request.
func (h History) TurnHash(response chat.Message) string {
	x := newHasher()
	x.sum = append(x.sum[:0], h.sum[:]...)
	response.Role = chat.RoleAssistant
	x.add(response)
	return x.hex()
}

// Anchor is a place in a request's history where an earlier turn's response
// may sit: the index of an assistant message and the hash of the history up
// to and including it.
type Anchor struct {
	Index int
	Hash  string
	// Message is the hash of the assistant message alone (ResponseHash), for
	// histories whose earlier part was rewritten (compaction).
	Message string
}

// ResponseHash identifies one assistant message after normalisation.
func ResponseHash(m chat.Message) string {
	x := newHasher()
	m.Role = chat.RoleAssistant
	x.add(m)
	return x.hex()
}

// Anchors returns one anchor per assistant message of msgs, latest first.
func Anchors(msgs []chat.Message) []Anchor {
	out, _ := anchorsAndHistory(msgs)
	return out
}

// anchorsAndHistory is Anchors and, from the same pass, the History of all of msgs.
func anchorsAndHistory(msgs []chat.Message) ([]Anchor, History) {
	x := newHasher()
	var out []Anchor
	for i, m := range msgs {
		if !keep(m) {
			continue
		}
		x.add(m)
		if m.Role == chat.RoleAssistant {
			out = append(out, Anchor{Index: i, Hash: x.hex(), Message: ResponseHash(m)})
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, x.history()
}

// NextState returns what followed the assistant message at index i: the
// messages after it up to the next assistant message, without OpenClaw's
// internal context block, and their kind (tool when they are all tool
// results, user otherwise). It returns nil when nothing followed.
func NextState(msgs []chat.Message, i int) ([]chat.Message, string) {
	var next []chat.Message
	allTool := true
	for _, m := range msgs[i+1:] {
		if m.Role == chat.RoleAssistant {
			break
		}
		if !keep(m) {
			continue
		}
		next = append(next, m)
		allTool = allTool && m.Role == chat.RoleTool
	}
	if len(next) == 0 {
		return nil, ""
	}
	if allTool {
		return next, store.NextTool
	}
	return next, store.NextUser
}
