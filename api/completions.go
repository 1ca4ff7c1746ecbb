package api

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/session"
	"github.com/clawrl/clawrl/store"
)

// Finish reasons on the wire (engine.FinishStop and FinishLength pass
// through; a stop with tool calls is reported as tool_calls).
const finishToolCalls = "tool_calls"

// maxToolCalls bounds the tool calls of one answer.
const maxToolCalls = 1024

// errClientGone marks a failed write to the client: it left, as a
// cancelled context says too.
var errClientGone = errors.New("client gone")

const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

func randomAlnum(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	for i := range b {
		b[i] = alnum[int(b[i])%len(alnum)]
	}
	return string(b)
}

func newCompletionID() string { return "chatcmpl-" + randomAlnum(24) }

// sanitizeCallID keeps only ASCII letters and digits: OpenClaw strips every
// other character, and an id that changes between our response and the
// client's echo would break pairing of the tool results.
func sanitizeCallID(id string) string {
	var b strings.Builder
	for _, c := range id {
		if c < 128 && strings.ContainsRune(alnum, c) {
			b.WriteRune(c)
		}
	}
	if b.Len() == 0 {
		return "call" + randomAlnum(20)
	}
	return b.String()
}

// readBody reads at most MaxBodyBytes (413 beyond).
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, *Error) {
	tooLarge := func() *Error {
		return errorWithCode(http.StatusRequestEntityTooLarge, "invalid_request_error", "request_too_large",
			"request body is larger than %d bytes", s.cfg.MaxBodyBytes)
	}
	if r.ContentLength > s.cfg.MaxBodyBytes {
		return nil, tooLarge()
	}
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Now().Add(s.cfg.BodyReadTimeout))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	rc.SetReadDeadline(time.Time{})
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, tooLarge()
		}
		return nil, badRequest("", "read request body: %v", err)
	}
	return body, nil
}

// turnRun is the state of one generation as its tokens arrive: incremental
// decoding, stop strings, output parsing and (when streaming) the SSE chunks.
type turnRun struct {
	s        *Server
	req      *chatRequest
	id       string
	created  int64
	start    time.Time
	firstTok time.Time
	// maxTokens is the limit the engine generates under: the request's
	// max_tokens (max_completion_tokens), else Config.DefaultMaxTokens,
	// capped by the context window's room after the prompt.
	maxTokens int

	dec     engine.Decoder
	parser  engine.Parser
	stop    stopMatcher
	stopped bool // a stop string matched: ignore further text

	force *forcedCall // tool_choice required or a named function; nil otherwise

	sse     *sseWriter
	pending []tokenLogprob // logprobs not yet attached to a chunk
	all     []tokenLogprob // every token's logprob, for non-streaming
	callIDs []string       // sanitised tool-call id per index
}

func (t *turnRun) emit(tok engine.Token) error {
	if t.firstTok.IsZero() {
		t.firstTok = time.Now()
	}
	if t.s.stopIDs[tok.ID] {
		return nil
	}
	if t.req.Logprobs {
		lp := t.s.tokenLogprob(tok)
		t.all = append(t.all, lp)
		t.pending = append(t.pending, lp)
	}
	if t.stopped {
		return engine.ErrStop
	}
	text, hit := t.stop.push(t.dec.Add(tok.ID))
	if err := t.deliver(t.parser.Add(text)); err != nil {
		return err
	}
	if hit {
		t.stopped = true
		return engine.ErrStop
	}
	return nil
}

// finish drains the decoder, stop matcher and parser.
func (t *turnRun) finish() (chat.Message, error) {
	if !t.stopped {
		text, _ := t.stop.push(t.dec.Flush())
		text += t.stop.flush()
		if err := t.deliver(t.parser.Add(text)); err != nil {
			return chat.Message{}, err
		}
	}
	d, msg := t.parser.Finish()
	if err := t.deliver(d); err != nil {
		return chat.Message{}, err
	}
	msg.Role = chat.RoleAssistant
	for i := range msg.ToolCalls {
		if i < len(t.callIDs) && t.callIDs[i] != "" {
			msg.ToolCalls[i].ID = t.callIDs[i]
		} else {
			msg.ToolCalls[i].ID = sanitizeCallID(msg.ToolCalls[i].ID)
		}
		msg.ToolCalls[i].Type = "function"
	}
	msg.ContentNull = msg.Content == "" && len(msg.ToolCalls) > 0
	return msg, nil
}

// deliver turns a parser delta into chunks (when streaming) and keeps the
// tool-call ids consistent between the stream and the final message. Under a
// forced tool call it checks each call's name as it is announced, and holds
// content back until a call has been announced (content first means the
// model broke the forced call; see forcedCall).
func (t *turnRun) deliver(d engine.Delta) error {
	if fc := t.force; fc != nil {
		for _, tc := range d.ToolCalls {
			if tc.Name != "" {
				if err := fc.announce(tc.Name); err != nil {
					return err
				}
			}
		}
		if !fc.called {
			fc.held += d.Content
			d.Content = ""
		} else if fc.held != "" {
			d.Content, fc.held = fc.held+d.Content, ""
		}
	}
	if t.sse == nil {
		// Non-streaming: only the tool-call ids matter (finish uses them).
		for _, tc := range d.ToolCalls {
			t.callID(tc)
		}
		return nil
	}
	var chunks []chunkDelta
	if d.Reasoning != "" {
		chunks = append(chunks, chunkDelta{ReasoningContent: d.Reasoning})
	}
	if d.Content != "" {
		c := d.Content
		chunks = append(chunks, chunkDelta{Content: &c})
	}
	for _, tc := range d.ToolCalls {
		if tc.Index < 0 || tc.Index > maxToolCalls {
			continue // a parser bug must not take the server down
		}
		td := toolCallDelta{Index: tc.Index, Function: toolCallDeltaFunc{Arguments: tc.Arguments}}
		if id, first := t.callID(tc); first {
			td.ID, td.Type, td.Function.Name = id, "function", tc.Name
		}
		chunks = append(chunks, chunkDelta{ToolCalls: []toolCallDelta{td}})
	}
	if len(chunks) == 0 {
		return nil
	}
	for i, cd := range chunks {
		c := chunk{ID: t.id, Object: "chat.completion.chunk", Created: t.created, Model: t.s.info.ID,
			Choices: []chunkChoice{{Delta: cd}}}
		if i == 0 && len(t.pending) > 0 {
			c.Choices[0].Logprobs = &choiceLogprobs{Content: t.pending, Refusal: nil}
			t.pending = nil
		}
		if err := t.sse.send(c); err != nil {
			return fmt.Errorf("%w: %w", errClientGone, err)
		}
	}
	return nil
}

// callID gives tool call tc.Index its sanitised id the first time the call
// shows its id or name (first reports that time), so the stream and the
// final message agree. A bad index (a parser bug) is ignored.
func (t *turnRun) callID(tc engine.ToolCallDelta) (id string, first bool) {
	if tc.Index < 0 || tc.Index > maxToolCalls {
		return "", false
	}
	for len(t.callIDs) <= tc.Index {
		t.callIDs = append(t.callIDs, "")
	}
	if t.callIDs[tc.Index] == "" && (tc.ID != "" || tc.Name != "") {
		t.callIDs[tc.Index] = sanitizeCallID(tc.ID)
		return t.callIDs[tc.Index], true
	}
	return t.callIDs[tc.Index], false
}

func (s *Server) tokenLogprob(tok engine.Token) tokenLogprob {
	text := s.format.Decode([]int32{tok.ID})
	lp := tokenLogprob{Token: text, Logprob: tok.Logprob, Bytes: bytesOf(text), TopLogprobs: []topLogprob{}}
	for _, alt := range tok.Top {
		at := s.format.Decode([]int32{alt.ID})
		lp.TopLogprobs = append(lp.TopLogprobs, topLogprob{Token: at, Logprob: alt.Logprob, Bytes: bytesOf(at)})
	}
	return lp
}

func bytesOf(s string) []int {
	out := make([]int, len(s))
	for i := 0; i < len(s); i++ {
		out[i] = int(s[i])
	}
	return out
}

func (s *Server) handleChatCompletions(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	ctx := r.Context()
	info := infoFrom(ctx)
	body, e := s.readBody(w, r)
	if e != nil {
		writeError(w, e)
		return
	}
	req, e := decodeChatRequest(body)
	if e != nil {
		writeError(w, e)
		return
	}
	info.stream = req.Stream
	force, e := forceToolCall(s.format, req)
	if e != nil {
		writeError(w, e)
		return
	}

	begun, err := s.tracker.Begin(ctx, session.Request{
		Hints: session.Hints{Header: r.Header, SessionID: req.SessionID, PromptCacheKey: req.PromptCacheKey,
			User: req.User, TurnType: req.TurnType},
		Messages: req.Messages, Tools: req.Tools,
	})
	if err != nil {
		if errors.Is(err, session.ErrBadHints) {
			writeError(w, badRequest("", "%v", err))
			return
		}
		s.log.Error("place request in its session", "err", err)
		writeError(w, errorWithCode(http.StatusInternalServerError, "server_error", "store_error", "could not record the session"))
		return
	}
	info.session, info.typ = begun.Session.ID, string(begun.Type)

	tools := req.Tools
	if req.ToolChoice == "none" {
		tools = nil
	}
	promptText, err := s.format.Render(req.Messages, tools, engine.RenderOptions{AddGenerationPrompt: true, EnableThinking: req.EnableThinking})
	if err != nil {
		writeError(w, badRequest("messages", "render the chat template: %v", err))
		return
	}
	var forcedText string
	if force != nil {
		// The forced opening is prompt: tokenised with it, never sampled.
		forcedText = force.prefix
		promptText += forcedText
	}
	promptIDs := s.format.Encode(promptText)
	room := s.info.ContextLength - len(promptIDs)
	if room < 1 {
		writeError(w, &Error{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: strPtr("messages"),
			Code: strPtr("context_length_exceeded"), Message: "the prompt is " + itoa(len(promptIDs)) + " tokens; the model's context is " + itoa(s.info.ContextLength)})
		return
	}
	maxTokens := req.MaxTokens
	if maxTokens == 0 {
		maxTokens = s.cfg.DefaultMaxTokens
	}
	maxTokens = min(maxTokens, room)

	s.metrics.inflight.Inc()
	defer s.metrics.inflight.Dec()
	run := &turnRun{s: s, req: req, id: newCompletionID(), created: start.Unix(), start: start, maxTokens: maxTokens,
		dec: s.format.NewDecoder(), parser: s.format.NewParser(tools), stop: stopMatcher{stops: req.Stop}, force: force}
	info.turn = run.id
	if req.Stream {
		run.sse = newSSEWriter(w)
		role := chunk{ID: run.id, Object: "chat.completion.chunk", Created: run.created, Model: s.info.ID,
			Choices: []chunkChoice{{Delta: chunkDelta{Role: chat.RoleAssistant, Content: new(string)}}}}
		if err := run.sse.send(role); err != nil {
			return // the client is gone
		}
	}
	if forcedText != "" {
		// The parser reads the forced opening as if the model wrote it: a
		// named call is announced (id, name) before the first token.
		if err := run.deliver(run.parser.Add(forcedText)); err != nil {
			if !errors.Is(err, errClientGone) {
				s.log.Error("forced tool call", "turn", run.id, "err", err)
				s.fail(w, run, errorWithCode(http.StatusInternalServerError, "server_error", "engine_error", "generation failed"))
			}
			return
		}
	}
	topLogprobs := 0
	if req.Logprobs {
		topLogprobs = req.TopLogprobs
	}
	gen, err := s.engine.Generate(ctx, engine.GenerateRequest{PromptIDs: promptIDs, MaxTokens: run.maxTokens,
		Sampling: withDefaultSampling(req, s.info), TopLogprobs: topLogprobs, Affinity: begun.Session.ID}, run.emit)
	var msg chat.Message
	if err == nil {
		msg, err = run.finish()
	}
	if err == nil && force != nil {
		msg, err = force.check(msg, gen.FinishReason)
	}
	if err != nil {
		if errors.Is(err, errForcedCall) && ctx.Err() == nil {
			// The model broke the forced call: nobody gets a usable answer,
			// so, like any failed generation, it is not recorded.
			s.log.Warn("forced tool call", "turn", run.id, "tool_choice", req.ToolChoice, "err", err)
			info.finish = "tool_call_failed"
			s.metrics.forcedFailed.Inc()
			s.fail(w, run, forcedCallError(err))
			return
		}
		if ctx.Err() != nil || errors.Is(err, errClientGone) {
			// The client went away: nobody saw this answer, so it has no
			// next state to learn from. It is not recorded.
			s.metrics.cancelled.Inc()
			info.finish = "cancelled"
			return
		}
		s.log.Error("generate", "turn", run.id, "err", err)
		s.fail(w, run, errorWithCode(http.StatusInternalServerError, "server_error", "engine_error", "generation failed"))
		return
	}
	if !run.firstTok.IsZero() {
		s.metrics.ttft.Observe(run.firstTok.Sub(start).Seconds())
	}
	finish := gen.FinishReason
	if finish == engine.FinishStop && len(msg.ToolCalls) > 0 {
		finish = finishToolCalls
	}

	// Durable before the last byte: the turn is inserted before the final
	// chunk (streaming) or the body (non-streaming) is written.
	turn := s.turnRecord(run, req, begun, promptText, promptIDs, gen, msg, finish)
	turn.ForcedText = forcedText
	insertCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	err = s.store.InsertTurn(insertCtx, turn)
	cancel()
	if err != nil {
		s.log.Error("record turn", "turn", run.id, "session", begun.Session.ID, "err", err)
		s.fail(w, run, errorWithCode(http.StatusInternalServerError, "server_error", "store_error", "could not record the turn"))
		return
	}
	if turn.Supersedes != "" {
		s.log.Info("a retried request replaces its unanswered turn", "turn", run.id, "superseded", turn.Supersedes, "session", begun.Session.ID)
	}
	s.metrics.promptTokens.Add(float64(len(promptIDs)))
	s.metrics.completionTokens.Add(float64(len(gen.Tokens)))
	s.metrics.turns.WithLabelValues(string(begun.Type), finish).Inc()
	info.finish, info.promptTokens, info.completion = finish, len(promptIDs), len(gen.Tokens)

	u := &usage{PromptTokens: len(promptIDs), CompletionTokens: len(gen.Tokens), TotalTokens: len(promptIDs) + len(gen.Tokens)}
	if run.sse != nil {
		fin := chunk{ID: run.id, Object: "chat.completion.chunk", Created: run.created, Model: s.info.ID,
			Choices: []chunkChoice{{Delta: chunkDelta{}, FinishReason: &finish}}}
		if len(run.pending) > 0 {
			fin.Choices[0].Logprobs = &choiceLogprobs{Content: run.pending}
		}
		if run.sse.send(fin) != nil {
			return
		}
		if req.IncludeUsage {
			if run.sse.send(chunk{ID: run.id, Object: "chat.completion.chunk", Created: run.created, Model: s.info.ID,
				Choices: []chunkChoice{}, Usage: u}) != nil {
				return
			}
		}
		run.sse.done()
		return
	}
	resp := completion{ID: run.id, Object: "chat.completion", Created: run.created, Model: s.info.ID, Usage: u,
		Choices: []choice{{Message: responseMessageOf(msg), FinishReason: finish}}}
	if req.Logprobs {
		all := run.all
		if all == nil {
			all = []tokenLogprob{}
		}
		resp.Choices[0].Logprobs = &choiceLogprobs{Content: all}
	}
	writeJSON(w, http.StatusOK, resp)
}

// fail reports an error: as an error response before streaming started, as
// an error event (and no [DONE]) after.
func (s *Server) fail(w http.ResponseWriter, run *turnRun, e *Error) {
	if run.sse == nil {
		writeError(w, e)
		return
	}
	run.sse.send(struct {
		Error *Error `json:"error"`
	}{e})
}

func responseMessageOf(m chat.Message) responseMessage {
	out := responseMessage{Role: chat.RoleAssistant, ReasoningContent: m.ReasoningContent}
	if !m.ContentNull {
		c := m.Content
		out.Content = &c
	}
	for _, tc := range m.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, responseToolCall{ID: tc.ID, Type: "function",
			Function: responseFunction{Name: tc.Function.Name, Arguments: tc.Function.Arguments}})
	}
	return out
}

func (s *Server) turnRecord(run *turnRun, req *chatRequest, begun session.Begun, promptText string, promptIDs []int32,
	gen engine.Generation, msg chat.Message, finish string) *store.Turn {
	ids := make([]int32, len(gen.Tokens))
	lps := make([]float32, len(gen.Tokens))
	for i, tok := range gen.Tokens {
		ids[i], lps[i] = tok.ID, tok.Logprob
	}
	return &store.Turn{
		ID: run.id, SessionID: begun.Session.ID, Type: begun.Type, Epoch: begun.Epoch, State: store.Generated,
		CreatedAt: run.start, Model: s.info.ID, Messages: req.Messages, Tools: req.Tools,
		PromptText: promptText, PromptIDs: promptIDs, Response: msg, ResponseText: s.format.Decode(ids),
		ResponseIDs: ids, BehaviourLogprobs: lps, PolicyVersion: gen.PolicyVersion, Engine: s.info.Engine,
		FinishReason: finish, PromptTokens: len(promptIDs), CompletionTokens: len(ids), MaxTokens: run.maxTokens,
		QueueNanos: gen.QueueNanos, PrefillNanos: gen.PrefillNanos, DecodeNanos: gen.DecodeNanos,
		TotalNanos:       time.Since(run.start).Nanoseconds(),
		ConversationHash: conversationHash(begun, req, msg),
		Supersedes:       begun.Supersedes,
	}
}

// conversationHash continues the hash Begin took of the request's history.
func conversationHash(begun session.Begun, req *chatRequest, msg chat.Message) string {
	if begun.History.Valid() {
		return begun.History.TurnHash(msg)
	}
	return session.TurnHash(req.Messages, msg)
}

// stopMatcher applies stop strings to the generated text, holding back a
// tail that may be the start of one.
type stopMatcher struct {
	stops   []string
	pending string
}

// push returns the text that is safe to pass on, and whether a stop string
// matched (the text before it is returned; the rest is dropped).
func (m *stopMatcher) push(text string) (string, bool) {
	if len(m.stops) == 0 {
		return text, false
	}
	m.pending += text
	cut := -1
	for _, s := range m.stops {
		if i := strings.Index(m.pending, s); i >= 0 && (cut < 0 || i < cut) {
			cut = i
		}
	}
	if cut >= 0 {
		out := m.pending[:cut]
		m.pending = ""
		return out, true
	}
	keep := 0
	for _, s := range m.stops {
		for n := min(len(s)-1, len(m.pending)); n > keep; n-- {
			if strings.HasSuffix(m.pending, s[:n]) {
				keep = n
				break
			}
		}
	}
	out := m.pending[:len(m.pending)-keep]
	m.pending = m.pending[len(m.pending)-keep:]
	return out, false
}

func (m *stopMatcher) flush() string {
	out := m.pending
	m.pending = ""
	return out
}
