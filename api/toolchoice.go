package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine"
)

// tool_choice "required" and a named function are enforced with a forced
// prefix: the opening of a tool call, as the chat template writes one
// (engine.Format.ToolCallPrefix), is appended to the rendered prompt, so the
// model continues from inside the call.
//
//	required:      <tool_call>\n{"name":                       (the model picks the function)
//	function "f":  <tool_call>\n{"name": "f", "arguments":     (the model writes the arguments)
//
// Recording: the forced text is part of the prompt. The turn's PromptText
// ends with it, its tokens end PromptIDs and store.Turn.ForcedText repeats
// it; ResponseIDs, ResponseText and BehaviourLogprobs hold only what the
// model sampled. The policy did not choose the forced tokens, so the trainer
// must not train on them, and with this split it cannot: it trains on
// response ids only, conditioned on the prompt ids the engine really saw.
// The client, and the recorded Response message, see the complete call: the
// output parser is fed the forced text before the first sampled token, so
// streamed deltas, the call's id, name and arguments come out as if the
// model had written it all.
//
// Without constrained decoding the model can still fail the contract. The
// rules (forcedCall.check and turnRun.deliver):
//   - a call naming a function that is not allowed (not among the tools, or
//     not the named one) stops the generation with errForcedCall;
//   - no call at all (the model broke the JSON before the name) is
//     errForcedCall, unless the token limit cut it short: then the answer is
//     empty with finish_reason "length";
//   - a call whose arguments are not a JSON object is errForcedCall, unless
//     the token limit cut it short: then the partial call is returned with
//     finish_reason "length", as OpenAI does.
//
// errForcedCall is answered with a 500 (code "tool_call_failed"; a streaming
// response gets an error event and no [DONE]) and nothing is recorded, as for
// any failed generation. OpenAI's SDKs retry a 500, which resamples.
var errForcedCall = errors.New("forced tool call failed")

// forcedCall is the state of enforcing tool_choice for one generation.
type forcedCall struct {
	prefix  string
	allowed map[string]bool
	called  bool   // a call of an allowed function was announced
	held    string // content seen before the first call (not sent unless a call follows)
}

// forceToolCall returns the forced call for req, or nil when tool_choice
// forces nothing. A format without tool-call syntax cannot be forced: 400.
func forceToolCall(f engine.Format, req *chatRequest) (*forcedCall, *Error) {
	var name string
	switch req.ToolChoice {
	case "required":
	case "function":
		name = req.ToolChoiceName
	default:
		return nil, nil
	}
	prefix, ok := f.ToolCallPrefix(name)
	if !ok {
		return nil, badRequest("tool_choice", "tool_choice %q cannot be enforced: the served model's chat template has no tool-call syntax", req.ToolChoice)
	}
	fc := &forcedCall{prefix: prefix, allowed: map[string]bool{}}
	if name != "" {
		fc.allowed[name] = true
	} else {
		for _, t := range req.Tools {
			fc.allowed[t.Function.Name] = true
		}
	}
	return fc, nil
}

// announce checks a call's name as the parser announces it.
func (fc *forcedCall) announce(name string) error {
	if !fc.allowed[name] {
		return fmt.Errorf("%w: the model called %q, which tool_choice does not allow", errForcedCall, name)
	}
	fc.called = true
	return nil
}

// check applies the rules to the finished message: it returns the message to
// answer with, or errForcedCall.
func (fc *forcedCall) check(msg chat.Message, finish string) (chat.Message, error) {
	if len(msg.ToolCalls) == 0 {
		if finish == engine.FinishLength {
			// Cut before the call had a name: nothing the client can use,
			// but a well-formed answer that says so.
			return chat.Message{Role: chat.RoleAssistant, ContentNull: true}, nil
		}
		return msg, fmt.Errorf("%w: the model's output after the forced tool-call opening is not a call", errForcedCall)
	}
	if finish == engine.FinishLength {
		return msg, nil
	}
	for _, tc := range msg.ToolCalls {
		if !isJSONObject(tc.Function.Arguments) {
			return msg, fmt.Errorf("%w: the arguments of the call of %q are not a JSON object", errForcedCall, tc.Function.Name)
		}
	}
	return msg, nil
}

func isJSONObject(s string) bool {
	t := bytes.TrimSpace([]byte(s))
	return len(t) > 0 && t[0] == '{' && json.Valid(t)
}

// forcedCallError is the response to errForcedCall.
func forcedCallError(err error) *Error {
	return errorWithCode(http.StatusInternalServerError, "server_error", "tool_call_failed", "%v", err)
}
