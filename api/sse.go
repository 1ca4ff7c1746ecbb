package api

import (
	"encoding/json"
	"net/http"
)

// sseWriter writes Server-Sent Events and flushes each one, so tokens reach
// the client as they are produced.
type sseWriter struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	buf []byte
}

func newSSEWriter(w http.ResponseWriter) *sseWriter {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no") // tell reverse proxies not to buffer
	w.WriteHeader(http.StatusOK)
	return &sseWriter{w: w, rc: http.NewResponseController(w)}
}

// send writes one "data: <json>" event.
func (s *sseWriter) send(v any) error {
	js, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return s.raw(js)
}

func (s *sseWriter) raw(data []byte) error {
	s.buf = append(s.buf[:0], "data: "...)
	s.buf = append(s.buf, data...)
	s.buf = append(s.buf, '\n', '\n')
	if _, err := s.w.Write(s.buf); err != nil {
		return err
	}
	return s.rc.Flush()
}

// done ends the stream the way OpenAI does.
func (s *sseWriter) done() error { return s.raw([]byte("[DONE]")) }
