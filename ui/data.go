package ui

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/store"
)

// The JSON the pages read. Field names are the page's contract (app.js);
// times are RFC 3339, durations milliseconds.

type sessionView struct {
	ID        string `json:"id"`
	Name      string `json:"name"`      // the client's id, or ID when it gave none
	ClientID  string `json:"client_id"` // "" when the client named it nowhere
	Key       string `json:"key"`
	KeySource string `json:"key_source"`
	Client    string `json:"client"`
	Epoch     int    `json:"epoch"`
	CreatedAt string `json:"created_at"`
	LastSeen  string `json:"last_seen"`
	Turns     int    `json:"turns"`
	Main      *int   `json:"main,omitempty"`
	Side      *int   `json:"side,omitempty"`
	Expired   bool   `json:"expired"`
}

func newSessionView(s store.Session) sessionView {
	return sessionView{ID: s.ID, Name: s.Name(), ClientID: s.ClientID(), Key: s.Key, KeySource: s.KeySource, Client: s.Client,
		Epoch: s.Epoch, CreatedAt: stamp(s.CreatedAt), LastSeen: stamp(s.LastSeen), Turns: s.Turns, Expired: s.Expired}
}

type feedbackView struct {
	Rating    int    `json:"rating"`
	Text      string `json:"text"`
	CreatedAt string `json:"created_at"`
}

func newFeedbackView(f *store.Feedback) *feedbackView {
	if f == nil {
		return nil
	}
	return &feedbackView{Rating: f.Rating, Text: f.Text, CreatedAt: stamp(f.CreatedAt)}
}

type turnSummaryView struct {
	ID             string        `json:"id"`
	Seq            int64         `json:"seq"`
	Index          int           `json:"index"`
	Type           string        `json:"type"`
	State          string        `json:"state"`
	CreatedAt      string        `json:"created_at"`
	PolicyVersion  int64         `json:"policy_version"`
	PromptTokens   int           `json:"prompt_tokens"`
	Completion     int           `json:"completion_tokens"`
	TotalMs        float64       `json:"total_ms"`
	Feedback       *feedbackView `json:"feedback"`
	DropReason     string        `json:"drop_reason"`
	Preview        string        `json:"preview"`
	Judged         bool          `json:"judged"`
	Score          int           `json:"score"`
	HintAccepted   bool          `json:"hint_accepted"`
	TrainedVersion int64         `json:"trained_version"`
}

type turnView struct {
	ID            string         `json:"id"`
	SessionID     string         `json:"session_id"`
	Index         int            `json:"index"`
	Type          string         `json:"type"`
	State         string         `json:"state"`
	CreatedAt     string         `json:"created_at"`
	Model         string         `json:"model"`
	Engine        string         `json:"engine"`
	PolicyVersion int64          `json:"policy_version"`
	FinishReason  string         `json:"finish_reason"`
	Messages      []chat.Message `json:"messages"`
	Tools         []chat.Tool    `json:"tools"`
	ForcedText    string         `json:"forced_text"`
	Response      chat.Message   `json:"response"`
	PromptTokens  int            `json:"prompt_tokens"`
	Completion    int            `json:"completion_tokens"`
	MaxTokens     int            `json:"max_tokens"` // 0: not recorded
	Timings       map[string]any `json:"timings"`
	NextState     []chat.Message `json:"next_state"`
	NextStateKind string         `json:"next_state_kind"`
	ObservedAt    string         `json:"observed_at"`
	Feedback      *feedbackView  `json:"feedback"`
	DropReason    string         `json:"drop_reason"`
}

type judgmentView struct {
	Score        int          `json:"score"`
	Reason       string       `json:"reason"`
	Judge        string       `json:"judge"`
	Votes        []store.Vote `json:"votes"`
	Hint         string       `json:"hint"`
	HintAccepted bool         `json:"hint_accepted"`
	Keep         bool         `json:"keep"`
	Why          string       `json:"why"`
	CreatedAt    string       `json:"created_at"`
	RevisedAt    string       `json:"revised_at"`
}

type sampleView struct {
	Method         string  `json:"method"`
	UseRL          bool    `json:"use_rl"`
	Reward         float64 `json:"reward"`
	OPD            bool    `json:"opd"`
	TeacherTokens  int     `json:"teacher_tokens"`
	TeacherVersion int64   `json:"teacher_version"`
	PolicyVersion  int64   `json:"policy_version"`
	Why            string  `json:"why"`
	CreatedAt      string  `json:"created_at"`
	TrainedVersion int64   `json:"trained_version"`
	// TeacherWrote: the sample trains on a response the teacher wrote with
	// the hint in context (every token of it), instead of the turn's own
	// (or, with --opd-response both, beside it); its text, decoded by the
	// served model's tokenizer, is TeacherResponse.
	TeacherWrote          bool   `json:"teacher_wrote"`
	TeacherResponse       string `json:"teacher_response,omitempty"`
	TeacherResponseTokens int    `json:"teacher_response_tokens,omitempty"`
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func millis(n int64) float64 { return float64(n) / 1e6 }

// sessionCursor is the opaque "next page" token of the session list: the
// last row's activity time and id.
func sessionCursor(s store.Session) string { return formatCursor(s.LastSeen.UnixNano(), s.ID) }

func formatCursor(nanos int64, id string) string { return strconv.FormatInt(nanos, 10) + "." + id }

func parseSessionCursor(c string) (time.Time, string, error) {
	at, id, ok := strings.Cut(c, ".")
	n, err := strconv.ParseInt(at, 10, 64)
	if !ok || err != nil || id == "" {
		return time.Time{}, "", fmt.Errorf("before %q: not a page cursor from this list", c)
	}
	return time.Unix(0, n), id, nil
}

func (h *Handler) overview(w http.ResponseWriter, r *http.Request) {
	st, err := h.cfg.Store.Stats(r.Context())
	if err != nil {
		h.fail(w, r, "stats", err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"model": h.cfg.Model, "policy_version": st.PolicyVersion,
		"sessions": st.Sessions, "turns": st.Turns})
}

func (h *Handler) sessions(w http.ResponseWriter, r *http.Request) {
	limit, err := pageLimit(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_limit", err.Error())
		return
	}
	q := r.URL.Query()
	f := store.SessionFilter{Query: q.Get("q"), Limit: limit + 1}
	if len(f.Query) > 512 {
		writeError(w, http.StatusBadRequest, "invalid_query", "q is longer than 512 bytes")
		return
	}
	if c := q.Get("before"); c != "" {
		if f.BeforeSeen, f.BeforeID, err = parseSessionCursor(c); err != nil {
			writeError(w, http.StatusBadRequest, "invalid_cursor", err.Error())
			return
		}
	}
	rows, err := h.cfg.Store.ListSessions(r.Context(), f)
	if err != nil {
		h.fail(w, r, "sessions", err)
		return
	}
	var next any
	if len(rows) > limit {
		rows = rows[:limit]
		next = sessionCursor(rows[limit-1].Session)
	}
	out := make([]sessionView, len(rows))
	for i, s := range rows {
		out[i] = newSessionView(s.Session)
		out[i].Main, out[i].Side = &rows[i].MainTurns, &rows[i].SideTurns
	}
	writeJSON(w, http.StatusOK, map[string]any{"sessions": out, "next": next})
}

func (h *Handler) session(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	limit, err := pageLimit(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_limit", err.Error())
		return
	}
	sess, err := h.cfg.Store.Session(ctx, r.PathValue("id"))
	if err != nil {
		h.fail(w, r, "session", err)
		return
	}
	f := store.TurnFilter{SessionID: sess.ID, Limit: limit + 1}
	if a := r.URL.Query().Get("after"); a != "" {
		if f.AfterID, err = strconv.ParseInt(a, 10, 64); err != nil || f.AfterID < 0 {
			writeError(w, http.StatusBadRequest, "invalid_cursor", fmt.Sprintf("after %q: want a turn's seq", a))
			return
		}
	}
	rows, err := h.cfg.Store.ListTurnSummaries(ctx, f)
	if err != nil {
		h.fail(w, r, "turns", err)
		return
	}
	var next any
	if len(rows) > limit {
		rows = rows[:limit]
		next = rows[limit-1].Seq
	}
	turns := make([]turnSummaryView, len(rows))
	for i, t := range rows {
		turns[i] = turnSummaryView{ID: t.ID, Seq: t.Seq, Index: t.Index, Type: string(t.Type), State: string(t.State),
			CreatedAt: stamp(t.CreatedAt), PolicyVersion: t.PolicyVersion, PromptTokens: t.PromptTokens, Completion: t.CompletionTokens,
			TotalMs: millis(t.TotalNanos), Feedback: newFeedbackView(t.Feedback), DropReason: t.DropReason, Preview: t.Preview,
			Judged: t.Judged, Score: t.Score, HintAccepted: t.HintAccepted, TrainedVersion: t.TrainedVersion}
	}
	// The chat continues a conversation from its last main turn.
	var lastMain any
	switch last, err := h.cfg.Store.LastTurn(ctx, sess.ID, store.Main); {
	case err == nil:
		lastMain = last.ID
	case !errors.Is(err, store.ErrNotFound):
		h.fail(w, r, "last turn", err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"session": newSessionView(sess), "turns": turns, "next": next, "last_main": lastMain})
}

func (h *Handler) turn(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	t, err := h.cfg.Store.Turn(ctx, r.PathValue("id"))
	if err != nil {
		h.fail(w, r, "turn", err)
		return
	}
	sess, err := h.cfg.Store.Session(ctx, t.SessionID)
	if err != nil {
		h.fail(w, r, "session", err)
		return
	}
	out := map[string]any{"session": newSessionView(sess), "judgment": nil, "sample": nil}
	out["turn"] = turnView{ID: t.ID, SessionID: t.SessionID, Index: t.Index, Type: string(t.Type), State: string(t.State),
		CreatedAt: stamp(t.CreatedAt), Model: t.Model, Engine: t.Engine, PolicyVersion: t.PolicyVersion, FinishReason: t.FinishReason,
		Messages: t.Messages, Tools: t.Tools, ForcedText: t.ForcedText, Response: t.Response,
		PromptTokens: t.PromptTokens, Completion: t.CompletionTokens, MaxTokens: t.MaxTokens,
		Timings: map[string]any{"queue_ms": millis(t.QueueNanos), "prefill_ms": millis(t.PrefillNanos),
			"decode_ms": millis(t.DecodeNanos), "total_ms": millis(t.TotalNanos)},
		NextState: t.NextState, NextStateKind: t.NextStateKind, ObservedAt: stamp(t.ObservedAt),
		Feedback: newFeedbackView(t.Feedback), DropReason: t.DropReason}
	switch j, err := h.cfg.Store.Judgment(ctx, t.ID); {
	case err == nil:
		out["judgment"] = judgmentView{Score: j.Score, Reason: j.Reason, Judge: j.Judge, Votes: j.Votes, Hint: j.Hint,
			HintAccepted: j.HintAccepted, Keep: j.Keep, Why: j.Why, CreatedAt: stamp(j.CreatedAt), RevisedAt: stamp(j.RevisedAt)}
	case !errors.Is(err, store.ErrNotFound):
		h.fail(w, r, "judgment", err)
		return
	}
	switch s, err := h.cfg.Store.Sample(ctx, t.ID); {
	case err == nil:
		v := sampleView{Method: s.Method, UseRL: s.UseRL, Reward: s.Reward, OPD: s.TeacherLogprobs != nil,
			TeacherTokens: len(s.TeacherLogprobs), TeacherVersion: s.TeacherVersion, PolicyVersion: s.PolicyVersion,
			Why: s.Why, CreatedAt: stamp(s.CreatedAt), TrainedVersion: s.TrainedVersion,
			TeacherWrote: s.TeacherResponseIDs != nil, TeacherResponseTokens: len(s.TeacherResponseIDs)}
		if v.TeacherWrote && h.cfg.Decode != nil {
			v.TeacherResponse = h.cfg.Decode(s.TeacherResponseIDs)
		}
		out["sample"] = v
	case !errors.Is(err, store.ErrNotFound):
		h.fail(w, r, "sample", err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

type versionView struct {
	Version   int64                `json:"version"`
	Method    string               `json:"method"`
	CreatedAt string               `json:"created_at"`
	Metrics   store.VersionMetrics `json:"metrics"`
	// The promotion result: promoted (served) or rejected by the retention
	// check, why, and the version it copies when a person asked to serve an
	// earlier one again.
	Status        string `json:"status"`
	StatusReason  string `json:"status_reason,omitempty"`
	SourceVersion int64  `json:"source_version,omitempty"`
}

// Throughput windows on the learning page.
var activityWindows = []time.Duration{10 * time.Minute, time.Hour}

func (h *Handler) learning(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	limit, err := pageLimit(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_limit", err.Error())
		return
	}
	st, err := h.cfg.Store.Stats(ctx)
	if err != nil {
		h.fail(w, r, "stats", err)
		return
	}
	ls, err := h.cfg.Store.LearningStats(ctx)
	if err != nil {
		h.fail(w, r, "learning stats", err)
		return
	}
	now := h.cfg.Now()
	var activity []map[string]any
	for _, win := range activityWindows {
		a, err := h.cfg.Store.Activity(ctx, now.Add(-win))
		if err != nil {
			h.fail(w, r, "activity", err)
			return
		}
		min := win.Minutes()
		activity = append(activity, map[string]any{"minutes": min, "judged": a.Judged, "sampled": a.Sampled,
			"trained": a.Trained, "versions": a.Versions,
			"judged_per_min": float64(a.Judged) / min, "trained_per_min": float64(a.Trained) / min})
	}
	versions, err := h.cfg.Store.Versions(ctx, limit)
	if err != nil {
		h.fail(w, r, "versions", err)
		return
	}
	vs := make([]versionView, len(versions))
	for i, v := range versions {
		status := v.Status
		if status == "" {
			status = store.VersionPromoted
		}
		vs[i] = versionView{Version: v.Version, Method: v.Method, CreatedAt: stamp(v.CreatedAt), Metrics: v.Metrics,
			Status: status, StatusReason: v.StatusReason, SourceVersion: v.SourceVersion}
	}
	bench, benchErr := loadBench(h.cfg.BenchDir)
	var latest int64
	if ls.Latest != nil {
		latest = ls.Latest.Version
	}
	out := map[string]any{
		// policy_version is the version behind the newest answer;
		// latest_version the newest one the trainer published.
		"model": h.cfg.Model, "policy_version": st.PolicyVersion, "latest_version": latest,
		"queues": map[string]any{"awaiting_judge": st.AwaitingJudge, "awaiting_trainer": st.AwaitingTrainer,
			"by_state": st.TurnsByState, "by_type": st.TurnsByType, "sessions": st.Sessions, "turns": st.Turns},
		"learning": map[string]any{"judgments": ls.Judgments, "hints_accepted": ls.HintsAccepted, "samples_ready": ls.SamplesReady, "samples_pending": ls.SamplesPending,
			"samples_total": ls.SamplesTotal, "trained": ls.Trained, "dropped_by": ls.DroppedBy, "versions": ls.Versions},
		"activity": activity, "versions": vs, "bench": bench, "bench_dir": h.cfg.BenchDir,
	}
	if benchErr != nil {
		out["bench_error"] = benchErr.Error()
	}
	writeJSON(w, http.StatusOK, out)
}
