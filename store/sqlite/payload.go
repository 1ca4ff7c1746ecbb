package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/store"
)

// A turn's payload (turn_payloads: messages, tools, prompt and response
// text, token ids, logprobs) is written once and never changed. Decoding it
// is most of the cost of reading a realistic turn (a 30k-character system
// prompt is JSON), and the gateway reads the turn it wrote one request ago
// (LastTurn, TurnByConversationHash) on every request. So the store keeps
// recently written and read payloads decoded, in an LRU bounded by bytes,
// and reads a turn in two steps: the small mutable row from turns (always
// fresh), then the payload from the cache or from turn_payloads.
//
// Because payloads are immutable and committed in the same transaction as
// their row, any snapshot that sees a turn also sees its payload, and a
// cached payload can never be stale. Callers get deep copies: a caller that
// edits a returned turn's slices cannot reach the cache.

// defaultPayloadCacheBytes bounds the cache of a read-write store: ~600
// realistic 110 KB turns, the recent turns of a few hundred live sessions.
const defaultPayloadCacheBytes = 64 << 20

// payload is the decoded write-once part of a turn.
type payload struct {
	messages          []chat.Message
	tools             []chat.Tool
	promptText        string
	promptIDs         []int32
	forcedText        string
	response          chat.Message
	responseText      string
	responseIDs       []int32
	behaviourLogprobs []float32
	size              int // approximate bytes held, for the cache bound
}

// payloadOf copies t's payload fields (the caller keeps ownership of t).
func payloadOf(t *store.Turn, encodedSize int) *payload {
	return &payload{
		messages:          cloneMessages(t.Messages),
		tools:             cloneTools(t.Tools),
		promptText:        t.PromptText,
		promptIDs:         slices.Clone(t.PromptIDs),
		forcedText:        t.ForcedText,
		response:          cloneMessage(t.Response),
		responseText:      t.ResponseText,
		responseIDs:       slices.Clone(t.ResponseIDs),
		behaviourLogprobs: slices.Clone(t.BehaviourLogprobs),
		size:              encodedSize,
	}
}

// applyTo copies the payload into t.
func (p *payload) applyTo(t *store.Turn) {
	t.Messages = cloneMessages(p.messages)
	t.Tools = cloneTools(p.tools)
	t.PromptText = p.promptText
	t.PromptIDs = slices.Clone(p.promptIDs)
	t.ForcedText = p.forcedText
	t.Response = cloneMessage(p.response)
	t.ResponseText = p.responseText
	t.ResponseIDs = slices.Clone(p.responseIDs)
	t.BehaviourLogprobs = slices.Clone(p.behaviourLogprobs)
}

// cloneMessage copies every reference a chat.Message holds (strings are
// immutable and shared). TestCloneCoversChatTypes fails if chat grows a
// field these functions do not know.
func cloneMessage(m chat.Message) chat.Message {
	m.ToolCalls = slices.Clone(m.ToolCalls)
	return m
}

func cloneMessages(ms []chat.Message) []chat.Message {
	if ms == nil {
		return nil
	}
	out := make([]chat.Message, len(ms))
	for i, m := range ms {
		out[i] = cloneMessage(m)
	}
	return out
}

func cloneTools(ts []chat.Tool) []chat.Tool {
	if ts == nil {
		return nil
	}
	out := slices.Clone(ts)
	for i := range out {
		f := &out[i].Function
		if f.Parameters != nil {
			f.Parameters = bytes.Clone(f.Parameters)
		}
		if f.Strict != nil {
			v := *f.Strict
			f.Strict = &v
		}
	}
	return out
}

// payloadColumns is what payloadRow reads from turn_payloads.
const payloadColumns = `messages, tools, prompt_text, prompt_ids, response, response_text, response_ids, behaviour_logprobs,
	messages_chunks, tools_chunks, prompt_text_chunks, prompt_ids_chunks, forced_text`

// payloadRow holds a turn_payloads row as stored.
type payloadRow struct {
	messages, tools, response        string
	promptText, responseText         string
	forcedText                       string
	promptIDs, responseIDs, logprobs []byte
	// Chunk id lists of the fields stored as chunks (NULL: inline).
	messagesChunks, toolsChunks, promptTextChunks, promptIDsChunks []byte
}

func (r *payloadRow) dest() []any {
	return []any{&r.messages, &r.tools, &r.promptText, &r.promptIDs, &r.response, &r.responseText, &r.responseIDs, &r.logprobs,
		&r.messagesChunks, &r.toolsChunks, &r.promptTextChunks, &r.promptIDsChunks, &r.forcedText}
}

// unchunk replaces every chunked field of r by the concatenation of its
// chunks, read through tx when it is not nil.
func (s *Store) unchunk(ctx context.Context, tx *sql.Tx, r *payloadRow, id string) error {
	fields := []struct {
		list []byte
		set  func([]byte)
		name string
	}{
		{r.messagesChunks, func(b []byte) { r.messages = string(b) }, "messages"},
		{r.toolsChunks, func(b []byte) { r.tools = string(b) }, "tools"},
		{r.promptTextChunks, func(b []byte) { r.promptText = string(b) }, "prompt text"},
		{r.promptIDsChunks, func(b []byte) { r.promptIDs = b }, "prompt ids"},
	}
	for _, f := range fields {
		if f.list == nil {
			continue
		}
		b, err := s.readChunks(ctx, tx, f.list, "turn "+id+": "+f.name)
		if err != nil {
			return err
		}
		f.set(b)
	}
	return nil
}

// decode turns the stored row (chunks already joined) into a payload; id
// names the turn in errors.
func (r *payloadRow) decode(id string) (*payload, error) {
	p := &payload{promptText: r.promptText, responseText: r.responseText, forcedText: r.forcedText}
	var err error
	if err := json.Unmarshal([]byte(r.messages), &p.messages); err != nil {
		return nil, fmt.Errorf("turn %s: decode messages: %w", id, err)
	}
	if err := json.Unmarshal([]byte(r.tools), &p.tools); err != nil {
		return nil, fmt.Errorf("turn %s: decode tools: %w", id, err)
	}
	if err := json.Unmarshal([]byte(r.response), &p.response); err != nil {
		return nil, fmt.Errorf("turn %s: decode response: %w", id, err)
	}
	if p.promptIDs, err = decodeInt32s(r.promptIDs); err != nil {
		return nil, fmt.Errorf("turn %s: prompt ids: %w", id, err)
	}
	if p.responseIDs, err = decodeInt32s(r.responseIDs); err != nil {
		return nil, fmt.Errorf("turn %s: response ids: %w", id, err)
	}
	if p.behaviourLogprobs, err = decodeFloat32s(r.logprobs); err != nil {
		return nil, fmt.Errorf("turn %s: behaviour logprobs: %w", id, err)
	}
	p.size = len(r.messages) + len(r.tools) + len(r.promptText) + len(r.promptIDs) + len(r.response) +
		len(r.responseText) + len(r.responseIDs) + len(r.logprobs) + len(r.forcedText)
	return p, nil
}

// inTx binds a prepared reader statement to tx, or returns it as is.
func inTx(ctx context.Context, tx *sql.Tx, stmt *sql.Stmt) *sql.Stmt {
	if tx == nil {
		return stmt
	}
	return tx.StmtContext(ctx, stmt)
}

// payloadCache holds decoded payloads keyed by turn seq.
type payloadCache = lru[int64, *payload]

func newPayloadCache(maxBytes int) *payloadCache { return newLRU[int64, *payload](maxBytes) }

// fillPayloads completes turns read from the turns row alone with their
// payloads, from the cache or turn_payloads.
func (s *Store) fillPayloads(ctx context.Context, ts []store.Turn) error {
	return s.fillPayloadsTx(ctx, nil, ts)
}

// fillPayloadsTx is fillPayloads reading through tx (a caller that holds a
// read transaction must not wait for a second pool connection).
func (s *Store) fillPayloadsTx(ctx context.Context, tx *sql.Tx, ts []store.Turn) error {
	for i := range ts {
		t := &ts[i]
		p, ok := s.cache.get(t.Seq)
		if !ok {
			var row payloadRow
			err := inTx(ctx, tx, s.stmts.payloadBySeq).QueryRowContext(ctx, t.Seq).Scan(row.dest()...)
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("turn %s: payload row %d is missing", t.ID, t.Seq)
			}
			if err != nil {
				return fmt.Errorf("turn %s: read payload: %w", t.ID, err)
			}
			if err := s.unchunk(ctx, tx, &row, t.ID); err != nil {
				return err
			}
			if p, err = row.decode(t.ID); err != nil {
				return err
			}
			s.cache.put(t.Seq, p, p.size)
		}
		p.applyTo(t)
	}
	return nil
}
