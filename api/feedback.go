package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/clawrl/clawrl/session"
	"github.com/clawrl/clawrl/store"
)

// maxFeedbackText bounds written feedback.
const maxFeedbackText = 64 << 10

// handleFeedback attaches a rating (+1/−1, or 0 with text only) and optional
// text to a turn: the completion named by id, or the last main turn of the
// session named by session_id (the client's id — OpenClaw's <id>:<n> works —
// or clawrl's own session id).
func (s *Server) handleFeedback(w http.ResponseWriter, r *http.Request) {
	body, e := s.readBody(w, r)
	if e != nil {
		writeError(w, e)
		return
	}
	if !utf8.Valid(body) {
		writeError(w, badRequest("", "request body is not valid UTF-8"))
		return
	}
	var req feedbackRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&req); err != nil {
		writeError(w, jsonError(err))
		return
	}
	rating := 0
	if req.Rating != nil {
		rating = *req.Rating
		if rating != 1 && rating != -1 && rating != 0 {
			writeError(w, badRequest("rating", "rating %d: want 1 or -1 (or 0 with text only)", rating))
			return
		}
	}
	if rating == 0 && strings.TrimSpace(req.Text) == "" {
		writeError(w, badRequest("rating", "feedback needs a rating (1 or -1) or text"))
		return
	}
	if len(req.Text) > maxFeedbackText {
		writeError(w, badRequest("text", "text is %d bytes, at most %d", len(req.Text), maxFeedbackText))
		return
	}
	ctx := r.Context()
	turnID := strings.TrimSpace(req.ID)
	sessionID := ""
	switch {
	case turnID != "":
	case strings.TrimSpace(req.SessionID) != "":
		sess, err := s.findSession(r, strings.TrimSpace(req.SessionID))
		if err != nil {
			s.storeError(w, err, "session %q", req.SessionID)
			return
		}
		last, err := s.store.LastTurn(ctx, sess.ID, store.Main)
		if err != nil {
			s.storeError(w, err, "main turn of session %q", req.SessionID)
			return
		}
		turnID, sessionID = last.ID, sess.ID
	default:
		writeError(w, badRequest("id", "feedback needs a completion id or a session_id"))
		return
	}
	if sessionID == "" {
		t, err := s.store.Turn(ctx, turnID)
		if err != nil {
			s.storeError(w, err, "turn %q", turnID)
			return
		}
		sessionID = t.SessionID
	}
	err := s.store.AddFeedback(ctx, turnID, store.Feedback{Rating: rating, Text: req.Text, CreatedAt: time.Now()})
	if err != nil {
		s.storeError(w, err, "feedback on turn %q", turnID)
		return
	}
	info := infoFrom(ctx)
	info.session, info.turn, info.typ = sessionID, turnID, "feedback"
	writeJSON(w, http.StatusOK, feedbackResponse{Object: "feedback", ID: turnID, SessionID: sessionID, Rating: rating})
}

// findSession resolves a client's session name the way chat requests do
// (so OpenClaw's "<id>:<n>" names its conversation), then as clawrl's id.
func (s *Server) findSession(r *http.Request, name string) (store.Session, error) {
	id, ok, err := session.Identify(session.Hints{Header: http.Header{}, PromptCacheKey: name})
	if err != nil {
		return store.Session{}, err
	}
	if ok {
		sess, err := s.store.SessionByKey(r.Context(), id.Key)
		if err == nil || !errors.Is(err, store.ErrNotFound) {
			return sess, err
		}
		if sess, err := s.store.SessionByKey(r.Context(), name); err == nil {
			return sess, nil
		}
	}
	return s.store.Session(r.Context(), name)
}

func (s *Server) storeError(w http.ResponseWriter, err error, format string, args ...any) {
	switch {
	case errors.Is(err, store.ErrNotFound):
		writeError(w, errorWithCode(http.StatusNotFound, "invalid_request_error", "not_found", format+": not found", args...))
	case errors.Is(err, store.ErrConflict):
		writeError(w, errorWithCode(http.StatusConflict, "invalid_request_error", "conflict", format+": the turn can no longer take feedback", args...))
	default:
		s.log.Error("feedback", "err", err)
		writeError(w, errorWithCode(http.StatusInternalServerError, "server_error", "store_error", "store error"))
	}
}
