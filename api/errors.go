// Package api is clawrl's gateway: OpenAI's wire types, the SSE encoder, the
// HTTP handlers (chat completions, models, feedback, health, metrics) and
// their middleware (auth, body limits, logging, metrics, panic recovery).
// Every served turn is recorded in the store before the last byte of its
// response is written.
package api

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// Error is an error in OpenAI's shape:
// {"error":{"message","type","param","code"}}.
type Error struct {
	Status  int     `json:"-"`
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

func (e *Error) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Type, e.Message) }

func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// badRequest is a 400 invalid_request_error naming the offending parameter.
func badRequest(param, format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Type: "invalid_request_error", Message: fmt.Sprintf(format, args...), Param: strPtr(param)}
}

func errorWithCode(status int, typ, code, format string, args ...any) *Error {
	return &Error{Status: status, Type: typ, Code: strPtr(code), Message: fmt.Sprintf(format, args...)}
}

func writeError(w http.ResponseWriter, e *Error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.Status)
	json.NewEncoder(w).Encode(struct {
		Error *Error `json:"error"`
	}{e})
}
