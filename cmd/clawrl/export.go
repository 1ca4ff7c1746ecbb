package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/store"
)

func init() { subcommands = append(subcommands, newExportCmd) }

// exportPageSize is how many turns one keyset page reads: large enough to
// amortise the query, small enough that a page of 8k-token turns stays a few
// megabytes.
const exportPageSize = 128

func newExportCmd() *cobra.Command {
	var (
		dataDir, storeURL, out, sessionID, since, states, typ string
		withIDs                                               bool
	)
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Write every recorded turn as JSONL, one object per turn",
		Long: `Write recorded turns as JSON Lines, one object per turn, oldest first.

Each record carries the seed's fields (session_id, turn, timestamp, messages,
prompt_text, response_text, tool_calls, next_state) and everything clawrl
keeps. session_id is the id the client gave the conversation (X-Session-Id,
OpenClaw's session, the body's session_id or prompt_cache_key, or its user),
or clawrl's own id when it gave none; clawrl's id is always in
internal_session_id. Beyond those: the turn id, type, epoch, state, token ids, behaviour logprobs, policy
version, finish reason, feedback, drop reason and timings — plus judgments and
samples once the learning loop records them. A sample with teacher_wrote
true trains on the answer the teacher wrote with the feedback in context
(its token ids in sample.teacher_response_ids, with --ids), not on the
turn's own response; the dashboard's turn page shows it as text.

max_tokens is the token limit the response was generated under (the
request's max_tokens, or the server's default, capped by the context window;
a stop token counts against it). Turns recorded before clawrl kept it have
none.

A turn whose tool call was forced (tool_choice "required" or a named
function) has forced_text: the opening of the call the server appended to the
rendered prompt. prompt_text and prompt_ids end with it (the model did not
sample it); response_text and response_ids are what the model sampled after
it; response and tool_calls hold the whole call.

It reads the store read-only, so it is safe while clawrl serve runs; turns
recorded after the export starts are not included.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := store.TurnFilter{SessionID: sessionID, Type: store.TurnType(typ)}
			var err error
			if f.Since, err = parseSince(since, time.Now()); err != nil {
				return err
			}
			if f.States, err = parseStates(states); err != nil {
				return err
			}
			if typ != "" && f.Type != store.Main && f.Type != store.Side {
				return fmt.Errorf("--type %q: want main or side", typ)
			}
			st, err := openReadStore(cmd.Context(), storeURL, dataDir)
			if err != nil {
				return err
			}
			defer st.Close()
			if sessionID != "" {
				if f.SessionID, err = resolveSession(cmd.Context(), st, sessionID); err != nil {
					return err
				}
			}
			// Stop at the newest turn that exists now, so an export next to
			// a busy server ends.
			last, err := st.MaxSeq(cmd.Context())
			if err != nil {
				return err
			}
			opts := exportOptions{Filter: f, UntilSeq: last, TokenIDs: withIDs}
			if out == "" || out == "-" {
				_, err := exportTurns(cmd.Context(), st, cmd.OutOrStdout(), opts)
				return err
			}
			return writeFileAtomic(out, func(w io.Writer) error {
				n, err := exportTurns(cmd.Context(), st, w, opts)
				if err == nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "exported %d turns to %s\n", n, out)
				}
				return err
			})
		},
	}
	addReadStoreFlags(cmd, &dataDir, &storeURL)
	cmd.Flags().StringVarP(&out, "out", "o", "", "output file (default: standard output)")
	cmd.Flags().StringVar(&sessionID, "session", "", "only this session: the client's id for it, or clawrl's internal id")
	cmd.Flags().StringVar(&since, "since", "", "only turns created since: RFC 3339 time, a date (2006-01-02), or a duration ago (24h)")
	cmd.Flags().StringVar(&states, "state", "", "only turns in these states, comma-separated (generated,observed,…)")
	cmd.Flags().StringVar(&typ, "type", "", "only main or side turns")
	cmd.Flags().BoolVar(&withIDs, "ids", true, "include prompt/response token ids, behaviour logprobs and a teacher-written sample's ids")
	return cmd
}

// resolveSession finds the session --session names: the client's id (as
// export writes it in session_id), or clawrl's internal id.
func resolveSession(ctx context.Context, st store.Sessions, name string) (string, error) {
	if sess, err := st.Session(ctx, name); err == nil {
		return sess.ID, nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return "", fmt.Errorf("--session %q: %w", name, err)
	}
	// A body `user` is kept as "user:<name>" (session.Identify).
	for _, key := range []string{name, "user:" + name} {
		sess, err := st.SessionByKey(ctx, key)
		if err == nil && sess.ClientID() == name {
			return sess.ID, nil
		}
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return "", fmt.Errorf("--session %q: %w", name, err)
		}
	}
	return "", fmt.Errorf("--session %q: no session has this id: %w", name, store.ErrNotFound)
}

// parseSince reads --since: an RFC 3339 time, a calendar date (UTC midnight)
// or a Go duration meaning that long before now. Empty means no bound.
func parseSince(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, fmt.Errorf("--since %q: a duration ago must be positive", s)
		}
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("--since %q: want an RFC 3339 time, a date like 2006-01-02, or a duration like 24h", s)
}

// parseStates reads a comma-separated list of turn states.
func parseStates(s string) ([]store.TurnState, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []store.TurnState
	for part := range strings.SplitSeq(s, ",") {
		st := store.TurnState(strings.TrimSpace(part))
		if !slices.Contains(store.TurnStates(), st) {
			return nil, fmt.Errorf("--state %q: unknown state %q", s, st)
		}
		if !slices.Contains(out, st) {
			out = append(out, st)
		}
	}
	return out, nil
}

type exportOptions struct {
	Filter   store.TurnFilter
	UntilSeq int64 // stop after this row (0: no bound)
	TokenIDs bool
}

// exportSource is what export reads: the store, plus sessions for their keys.
type exportSource interface {
	store.Turns
	Session(ctx context.Context, id string) (store.Session, error)
}

// exportTurns streams the turns matching opts to w as JSONL, page by page on
// the row order, and returns how many it wrote.
func exportTurns(ctx context.Context, src exportSource, w io.Writer, opts exportOptions) (int, error) {
	bw := bufio.NewWriterSize(w, 1<<20)
	annotator, _ := src.(store.Annotator)
	sessions := map[string]store.Session{}
	f := opts.Filter
	f.Limit = exportPageSize
	n := 0
	for {
		page, err := src.ListTurns(ctx, f)
		if err != nil {
			return n, fmt.Errorf("export: %w", err)
		}
		if opts.UntilSeq > 0 {
			page = slices.DeleteFunc(page, func(t store.Turn) bool { return t.Seq > opts.UntilSeq })
		}
		if len(page) == 0 {
			break
		}
		var extra map[string]map[string]any
		if annotator != nil {
			ids := make([]string, len(page))
			for i, t := range page {
				ids[i] = t.ID
			}
			if extra, err = annotator.AnnotateTurns(ctx, ids); err != nil {
				return n, fmt.Errorf("export: annotate turns: %w", err)
			}
		}
		for _, t := range page {
			sess, ok := sessions[t.SessionID]
			if !ok {
				if len(sessions) > 10000 { // bound memory on huge exports
					clear(sessions)
				}
				if sess, err = src.Session(ctx, t.SessionID); err != nil {
					return n, fmt.Errorf("export turn %s: %w", t.ID, err)
				}
				sessions[t.SessionID] = sess
			}
			if smp, ok := extra[t.ID]["sample"].(map[string]any); ok && !opts.TokenIDs {
				delete(smp, "teacher_response_ids")
			}
			line, err := marshalRecord(newTurnRecord(t, sess, opts.TokenIDs), extra[t.ID])
			if err != nil {
				return n, fmt.Errorf("export turn %s: %w", t.ID, err)
			}
			bw.Write(line)
			if err := bw.WriteByte('\n'); err != nil {
				return n, fmt.Errorf("export: write: %w", err)
			}
			n++
		}
		f.AfterID = page[len(page)-1].Seq
		if len(page) < exportPageSize && opts.UntilSeq == 0 {
			break
		}
	}
	if err := bw.Flush(); err != nil {
		return n, fmt.Errorf("export: write: %w", err)
	}
	return n, nil
}

// turnRecord is one exported line. The first block is the seed's record
// (OpenClaw-RL's JSONL), so its tools read ours — its session_id is the
// client's id for the conversation, as the seed's was; the rest is what
// clawrl adds, its own session id included. `turn` is the 0-based index within the session; next_state is the
// list of messages that followed (the user's reply, every tool result).
type turnRecord struct {
	SessionID    string          `json:"session_id"`
	Turn         int             `json:"turn"`
	Timestamp    string          `json:"timestamp"`
	Messages     []chat.Message  `json:"messages"`
	PromptText   string          `json:"prompt_text"`
	ResponseText string          `json:"response_text"`
	ToolCalls    []chat.ToolCall `json:"tool_calls"`
	NextState    []chat.Message  `json:"next_state"`

	ID                string          `json:"id"`
	Seq               int64           `json:"seq"`
	InternalSessionID string          `json:"internal_session_id"`
	SessionKey        string          `json:"session_key,omitempty"`
	SessionKeySource  string          `json:"session_key_source,omitempty"`
	Type              store.TurnType  `json:"type"`
	Epoch             int             `json:"epoch"`
	State             store.TurnState `json:"state"`
	Model             string          `json:"model,omitempty"`
	Tools             []chat.Tool     `json:"tools,omitempty"`
	Response          chat.Message    `json:"response"`
	ForcedText        string          `json:"forced_text,omitempty"`
	PromptIDs         []int32         `json:"prompt_ids,omitempty"`
	ResponseIDs       []int32         `json:"response_ids,omitempty"`
	BehaviourLogprobs logprobs        `json:"behaviour_logprobs,omitempty"`
	PolicyVersion     int64           `json:"policy_version"`
	Engine            string          `json:"engine,omitempty"`
	FinishReason      string          `json:"finish_reason,omitempty"`
	PromptTokens      int             `json:"prompt_tokens"`
	CompletionTokens  int             `json:"completion_tokens"`
	MaxTokens         int             `json:"max_tokens,omitempty"`
	Timings           timings         `json:"timings"`
	ConversationHash  string          `json:"conversation_hash,omitempty"`
	NextStateKind     string          `json:"next_state_kind,omitempty"`
	ObservedAt        string          `json:"observed_at,omitempty"`
	Feedback          *feedback       `json:"feedback,omitempty"`
	DropReason        string          `json:"drop_reason,omitempty"`
}

type timings struct {
	QueueMs   float64 `json:"queue_ms"`
	PrefillMs float64 `json:"prefill_ms"`
	DecodeMs  float64 `json:"decode_ms"`
	TotalMs   float64 `json:"total_ms"`
}

type feedback struct {
	Rating    int    `json:"rating"`
	Text      string `json:"text,omitempty"`
	Timestamp string `json:"timestamp,omitempty"`
}

func newTurnRecord(t store.Turn, sess store.Session, tokenIDs bool) turnRecord {
	r := turnRecord{
		SessionID:         sess.Name(),
		InternalSessionID: t.SessionID,
		Turn:              t.Index,
		Timestamp:         timestamp(t.CreatedAt),
		Messages:          orEmpty(t.Messages),
		PromptText:        t.PromptText,
		ResponseText:      t.ResponseText,
		ToolCalls:         orEmpty(t.Response.ToolCalls),
		NextState:         t.NextState,
		ID:                t.ID,
		Seq:               t.Seq,
		SessionKey:        sess.Key,
		SessionKeySource:  sess.KeySource,
		Type:              t.Type,
		Epoch:             t.Epoch,
		State:             t.State,
		Model:             t.Model,
		Tools:             t.Tools,
		Response:          t.Response,
		ForcedText:        t.ForcedText,
		PolicyVersion:     t.PolicyVersion,
		Engine:            t.Engine,
		FinishReason:      t.FinishReason,
		PromptTokens:      t.PromptTokens,
		CompletionTokens:  t.CompletionTokens,
		MaxTokens:         t.MaxTokens,
		Timings: timings{QueueMs: ms(t.QueueNanos), PrefillMs: ms(t.PrefillNanos),
			DecodeMs: ms(t.DecodeNanos), TotalMs: ms(t.TotalNanos)},
		ConversationHash: t.ConversationHash,
		NextStateKind:    t.NextStateKind,
		ObservedAt:       timestamp(t.ObservedAt),
		DropReason:       t.DropReason,
	}
	if tokenIDs {
		r.PromptIDs, r.ResponseIDs, r.BehaviourLogprobs = t.PromptIDs, t.ResponseIDs, t.BehaviourLogprobs
	}
	if t.Feedback != nil {
		r.Feedback = &feedback{Rating: t.Feedback.Rating, Text: t.Feedback.Text, Timestamp: timestamp(t.Feedback.CreatedAt)}
	}
	return r
}

// orEmpty makes a nil slice export as [] rather than null, as the seed's
// records always had lists.
func orEmpty[T any](v []T) []T {
	if v == nil {
		return []T{}
	}
	return v
}

func timestamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func ms(nanos int64) float64 { return float64(nanos) / 1e6 }

// logprobs marshals as a JSON array, writing null for a value JSON cannot
// hold (−Inf for a token the sampler could not have drawn), where
// encoding/json would fail the whole record.
type logprobs []float32

func (l logprobs) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 2+len(l)*10)
	b = append(b, '[')
	for i, x := range l {
		if i > 0 {
			b = append(b, ',')
		}
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			b = append(b, "null"...)
			continue
		}
		b = strconv.AppendFloat(b, float64(x), 'g', -1, 32)
	}
	return append(b, ']'), nil
}

// marshalRecord encodes r and appends the annotations a store added (the
// extension point for judgments and samples), in sorted key order. An
// annotation never replaces a field of the turn itself.
func marshalRecord(r turnRecord, extra map[string]any) ([]byte, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	if len(extra) == 0 {
		return b, nil
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		if !recordFields[k] {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	b = b[:len(b)-1] // drop the closing brace
	for _, k := range keys {
		kb, _ := json.Marshal(k)
		vb, err := json.Marshal(extra[k])
		if err != nil {
			return nil, fmt.Errorf("annotation %q: %w", k, err)
		}
		b = append(b, ',')
		b = append(b, kb...)
		b = append(b, ':')
		b = append(b, vb...)
	}
	return append(b, '}'), nil
}

// recordFields are the JSON names turnRecord uses, which annotations may not
// take over.
var recordFields = func() map[string]bool {
	m := map[string]bool{}
	rt := reflect.TypeFor[turnRecord]()
	for i := range rt.NumField() {
		name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		m[name] = true
	}
	return m
}()

// writeFileAtomic writes path through a temporary file in the same
// directory and renames it into place, so a failed export never leaves a
// truncated file where a good one was.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if err := write(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
