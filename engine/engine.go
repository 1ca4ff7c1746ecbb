// Package engine defines what the gateway, the judge and the trainer need from
// a model runtime: generating tokens with their logprobs, scoring a given
// completion, the model's tokenizer and chat format, and adapter versions.
//
// Implementations live in subpackages named after what they wrap:
// engine/native (the Go transformer in this binary) and, later, remote engines
// (vLLM, SGLang, llama.cpp). engine/scripted is a deterministic engine for
// tests only. Callers never know which one they talk to.
package engine

import (
	"context"
	"errors"

	"github.com/clawrl/clawrl/chat"
)

// Engine is a model runtime.
type Engine interface {
	// Info describes the served model.
	Info() Info
	// Format is the model's tokenizer and chat template.
	Format() Format
	// Generate samples a completion of req.PromptIDs. Each sampled token is
	// passed to emit as soon as it exists; emit returning ErrStop ends the
	// generation normally (finish reason "stop"), any other error aborts it.
	// Cancelling ctx aborts it too. The returned Generation is complete even
	// when emit stopped it early.
	Generate(ctx context.Context, req GenerateRequest, emit func(Token) error) (Generation, error)
	// Score returns the log-probability of each completion token given the
	// prompt and the tokens before it, from one prefill, under the chosen
	// adapter. It is what the trainer recomputes and what the OPD teacher uses.
	Score(ctx context.Context, req ScoreRequest) (Scored, error)
}

// Publisher is implemented by engines that take new adapter versions while
// serving. Requests in flight finish on the version they started with; new
// requests get the newest published version.
type Publisher interface {
	// Publish loads the PEFT adapter in dir as version v and makes it current.
	Publish(ctx context.Context, v int64, dir string) error
	// Version is the current policy version (0 = base weights, no adapter).
	Version() int64
}

// ErrStop, returned by an emit callback, ends a generation normally.
var ErrStop = errors.New("engine: stop")

// Info describes the served model.
type Info struct {
	ID            string // the model id shown in /v1/models
	Family        string // qwen3, qwen2, llama, …
	ContextLength int
	Engine        string // native, scripted, vllm, …
	// DefaultSampling is the model's own sampling (its generation_config.json
	// or GGUF metadata) for requests that set none; nil = the gateway's
	// fallback, DefaultTemperature and DefaultTopP.
	DefaultSampling *Sampling
}

// The sampling a request gets when neither it nor the model sets any: mild
// enough that small models stay coherent (at temperature 1 SmolLM2 drifts
// into nonsense).
const (
	DefaultTemperature = 0.7
	DefaultTopP        = 0.9
)

// Adapter selects the weights a request runs on.
const (
	AdapterCurrent = ""     // the newest published version
	AdapterBase    = "base" // base weights, no adapter (the judge's default)
)

// Sampling parameters. Temperature 0 is greedy.
type Sampling struct {
	Temperature float64
	TopP        float64 // 0 or 1 = off
	TopK        int     // 0 = off
	Seed        *int64  // nil = random
}

// GenerateRequest asks for a completion of a tokenised prompt.
type GenerateRequest struct {
	PromptIDs   []int32
	MaxTokens   int
	Sampling    Sampling
	TopLogprobs int    // alternatives to report per token (0 = none)
	Adapter     string // AdapterCurrent, AdapterBase, or "v<N>"
}

// Token is one sampled token. Logprob is the log-probability of ID under the
// distribution it was sampled from *before* temperature, top-p and top-k are
// applied (log-softmax of the raw logits), which is the distribution the
// trainer recomputes as π.
type Token struct {
	ID      int32
	Logprob float32
	Top     []TokenLogprob
}

// TokenLogprob is one alternative token and its logprob.
type TokenLogprob struct {
	ID      int32
	Logprob float32
}

// Finish reasons.
const (
	FinishStop   = "stop"   // end-of-sequence token or a stop condition
	FinishLength = "length" // MaxTokens or the context window reached
)

// Generation is a finished generation.
type Generation struct {
	Tokens        []Token
	FinishReason  string
	PolicyVersion int64 // the adapter version that produced every token
	PromptTokens  int
	// Timings, for the store and /metrics.
	QueueNanos, PrefillNanos, DecodeNanos int64
}

// ScoreRequest asks for the logprobs of CompletionIDs after PromptIDs.
type ScoreRequest struct {
	PromptIDs     []int32
	CompletionIDs []int32
	Adapter       string
}

// Scored holds one logprob per completion token.
type Scored struct {
	Logprobs      []float32
	PolicyVersion int64
}

// Format is a model's tokenizer and chat template.
type Format interface {
	// Render renders a conversation with the model's chat template, ending
	// with the generation prompt when opts.AddGenerationPrompt is set.
	Render(msgs []chat.Message, tools []chat.Tool, opts RenderOptions) (string, error)
	Encode(text string) []int32
	Decode(ids []int32) string
	// NewDecoder returns an incremental decoder that only releases complete
	// UTF-8 text, for streaming.
	NewDecoder() Decoder
	// NewParser returns an incremental parser that splits generated text into
	// content, reasoning and tool calls.
	NewParser(tools []chat.Tool) Parser
	// StopIDs are the token ids that end a turn (EOS, <|im_end|>, <|eot_id|>).
	StopIDs() []int32
	// ToolCallPrefix is the text that opens a tool call in this format's
	// output, as the chat template renders calls: through the arguments' key
	// for a call of function name, through the name's key when name is ""
	// (any function). The gateway appends it to the rendered prompt to
	// enforce tool_choice "required" or a named function. ok is false when
	// the format has no tool-call syntax.
	ToolCallPrefix(name string) (prefix string, ok bool)
}

// RenderOptions, Delta and ToolCallDelta are chat-domain types (package
// chat), so the tokenizer's chat formats need not import the engine.
type (
	RenderOptions = chat.RenderOptions
	Delta         = chat.Delta
	ToolCallDelta = chat.ToolCallDelta
)

// Decoder turns token ids into text incrementally.
type Decoder interface {
	// Add consumes one token and returns the text that became complete.
	Add(id int32) string
	// Flush returns whatever is left (possibly with U+FFFD for broken bytes).
	Flush() string
}

// Parser splits streamed assistant text into its parts.
type Parser interface {
	// Add consumes the next piece of generated text.
	Add(text string) Delta
	// Finish ends the stream and returns the last delta and the whole message.
	Finish() (Delta, chat.Message)
}
