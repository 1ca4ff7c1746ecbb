package judge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine"
)

// RemoteTeacher has another model, behind any OpenAI-compatible server (a
// second clawrl, a llama.cpp server, vLLM), write the teacher's answer for
// context distillation (--teacher-url, --teacher-model). The policy's own
// teacher is bounded by the policy: a 135M model shown "start with TL;DR:"
// never writes it (BENCHMARKS.md, "What bounds the average on this
// model"), so there is nothing to distil; a larger model can write it.
//
// The server returns text. Teacher.Write tokenizes it with the policy's
// tokenizer and scores those tokens with the policy's own hint-conditioned
// teacher, so the sample is the same shape as a locally written one (the
// response ids and one teacher logprob per id). A server that fails (an
// error, a timeout, a body of the wrong shape, an empty answer) leaves the
// write to the policy's own teacher; Stats counts both.
type RemoteTeacher struct {
	// URL is the OpenAI-compatible base, e.g. http://127.0.0.1:31000/v1
	// (POST URL/chat/completions).
	URL, Model, Key string
	Client          *http.Client
	// Timeout bounds one request (0: the client's own).
	Timeout time.Duration
	Log     *slog.Logger

	mu    sync.Mutex
	stats RemoteStats
}

// RemoteStats counts the remote teacher's answers: Written were used,
// FellBack were replaced by the policy's own teacher; LastError is the
// most recent reason.
type RemoteStats struct {
	Written, FellBack int64
	LastError         string
}

// Stats returns the counters (safe for concurrent use).
func (r *RemoteTeacher) Stats() RemoteStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stats
}

func (r *RemoteTeacher) fail(err error) {
	r.mu.Lock()
	r.stats.FellBack++
	r.stats.LastError = err.Error()
	r.mu.Unlock()
}

func (r *RemoteTeacher) wrote() {
	r.mu.Lock()
	r.stats.Written++
	r.mu.Unlock()
}

// maxTeacherBody bounds what is read from a teacher server.
const maxTeacherBody = 4 << 20

// Answer asks the server for one greedy answer to msgs of at most maxTokens
// of its own tokens. It returns the answer's text and whether the server
// ended it itself (finish_reason other than "length").
func (r *RemoteTeacher) Answer(ctx context.Context, msgs []chat.Message, maxTokens int) (string, bool, error) {
	return r.AnswerAt(ctx, msgs, maxTokens, engine.Sampling{})
}

// AnswerAt is Answer sampled at sp's temperature (0: greedy), with its seed
// sent as the request's "seed" when set (OpenAI's, vLLM's and clawrl's
// field: the same seed draws the same answer).
func (r *RemoteTeacher) AnswerAt(ctx context.Context, msgs []chat.Message, maxTokens int, sp engine.Sampling) (string, bool, error) {
	req := newChatRequest(r.Model, msgs, sp.Temperature, maxTokens, nil)
	req.Seed = sp.Seed
	if r.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.Timeout)
		defer cancel()
	}
	data, err := postChat(ctx, r.Client, r.URL, r.Key, req, maxTeacherBody, "teacher")
	if err != nil {
		return "", false, err
	}
	text, finish, err := ParseTeacherAnswer(data)
	if err != nil {
		return "", false, fmt.Errorf("teacher POST %s: %w", r.URL, err)
	}
	return text, finish != "length", nil
}

// ParseTeacherAnswer reads an OpenAI chat completion body: the first
// choice's content (never its reasoning: the student learns the answer,
// not a thinking model's scratch work) and its finish reason. Empty or
// whitespace-only content is an error.
func ParseTeacherAnswer(data []byte) (text, finish string, err error) {
	var out struct {
		Choices []struct {
			FinishReason string `json:"finish_reason"`
			Message      struct {
				Content *string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return "", "", fmt.Errorf("teacher response %q: %w", clip(string(data), 200), err)
	}
	if len(out.Choices) == 0 {
		return "", "", fmt.Errorf("teacher response %q: no choices", clip(string(data), 200))
	}
	c := out.Choices[0]
	if c.Message.Content == nil || strings.TrimSpace(*c.Message.Content) == "" {
		return "", "", fmt.Errorf("teacher response %q: empty answer", clip(string(data), 200))
	}
	return strings.TrimSpace(*c.Message.Content), c.FinishReason, nil
}

// errNoStop is a format with no stop token to end a written answer.
var errNoStop = errors.New("the policy's format has no stop token")

// writeRemote is Write through t.Remote: the remote model answers the
// hint-conditioned prompt (the same messages the policy's teacher would
// see), the policy's tokenizer encodes the text (plus the stop token when
// the answer ended within maxTokens tokens), and the policy's own teacher
// scores those ids as it scores a student's response.
func (t *Teacher) writeRemote(ctx context.Context, msgs []chat.Message, tools []chat.Tool, promptText, hint string, maxTokens int) ([]int32, []float32, int64, error) {
	tm, err := t.messages(msgs, hint)
	if err != nil {
		return nil, nil, 0, err
	}
	text, ended, err := t.Remote.AnswerAt(ctx, tm, maxTokens, t.Sampling)
	if err != nil {
		return nil, nil, 0, err
	}
	f := t.Engine.Format()
	ids := f.Encode(text)
	if len(ids) == 0 {
		return nil, nil, 0, fmt.Errorf("teacher answer %q: no tokens", clip(text, 80))
	}
	stop := f.StopIDs()
	switch {
	case len(stop) == 0:
		return nil, nil, 0, errNoStop
	case len(ids) >= maxTokens:
		// Cut where the policy's own teacher would have been cut: no stop
		// token, so the student does not learn to end mid-sentence.
		ids = ids[:maxTokens]
	case ended:
		ids = append(ids, stop[0])
	}
	lps, v, err := t.Logprobs(ctx, msgs, tools, promptText, ids, hint)
	if err != nil {
		return nil, nil, 0, err
	}
	return ids, lps, v, nil
}

// writeVia tries the remote teacher and reports whether it wrote; on a
// failure (not a cancelled ctx) it counts the fallback and logs why, and
// the caller writes with the policy's own teacher.
func (t *Teacher) writeVia(ctx context.Context, msgs []chat.Message, tools []chat.Tool, promptText, hint string, maxTokens int) ([]int32, []float32, int64, bool, error) {
	ids, lps, v, err := t.writeRemote(ctx, msgs, tools, promptText, hint, maxTokens)
	switch {
	case err == nil:
		t.Remote.wrote()
		return ids, lps, v, true, nil
	case ctx.Err() != nil:
		return nil, nil, 0, false, ctx.Err()
	}
	t.Remote.fail(err)
	if t.Remote.Log != nil {
		t.Remote.Log.Warn("remote teacher failed: the policy's own teacher writes this answer", "url", t.Remote.URL, "err", err)
	}
	return nil, nil, 0, false, nil
}
