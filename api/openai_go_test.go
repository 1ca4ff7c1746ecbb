package api

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/clawrl/clawrl/store"
)

func openaiClient(ts *testServer, opts ...option.RequestOption) openai.Client {
	key := ts.key
	if key == "" {
		key = "unused"
	}
	return openai.NewClient(append([]option.RequestOption{option.WithBaseURL(ts.URL + "/v1"), option.WithAPIKey(key), option.WithMaxRetries(0)}, opts...)...)
}

func TestOpenAIGoNonStreaming(t *testing.T) {
	ts := newTestServer(t, serverOptions{apiKey: "sekret"})
	client := openaiClient(ts)
	ctx := context.Background()
	resp, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:    "scripted",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("be brief"), openai.UserMessage("[[think:hmm]][[say:Hello, world!]]")},
		Logprobs: openai.Bool(true), TopLogprobs: openai.Int(2),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Choices) != 1 || resp.Choices[0].Message.Content != "Hello, world!" || resp.Choices[0].FinishReason != "stop" {
		t.Fatalf("response %+v", resp.Choices)
	}
	if !strings.HasPrefix(resp.ID, "chatcmpl-") || resp.Model != "scripted" {
		t.Fatalf("id %q model %q", resp.ID, resp.Model)
	}
	var extra struct {
		ReasoningContent string `json:"reasoning_content"`
	}
	if err := json.Unmarshal([]byte(resp.Choices[0].Message.RawJSON()), &extra); err != nil || extra.ReasoningContent != "hmm" {
		t.Fatalf("reasoning_content %q (%v)", extra.ReasoningContent, err)
	}
	turn, err := ts.store.Turn(ctx, resp.ID)
	if err != nil {
		t.Fatalf("turn %s not recorded: %v", resp.ID, err)
	}
	if int(resp.Usage.CompletionTokens) != len(turn.ResponseIDs) || int(resp.Usage.PromptTokens) != len(turn.PromptIDs) {
		t.Fatalf("usage %+v, recorded %d prompt / %d completion ids", resp.Usage, len(turn.PromptIDs), len(turn.ResponseIDs))
	}
	// The stop token is recorded (it is trained on) but not reported as a
	// visible token's logprob.
	if got, want := len(resp.Choices[0].Logprobs.Content), len(turn.ResponseIDs)-1; got != want {
		t.Fatalf("%d logprobs, want %d", got, want)
	}
	for i, lp := range resp.Choices[0].Logprobs.Content {
		if float32(lp.Logprob) != turn.BehaviourLogprobs[i] || len(lp.TopLogprobs) != 2 {
			t.Fatalf("logprob %d = %+v, recorded %v", i, lp, turn.BehaviourLogprobs[i])
		}
	}
}

func TestOpenAIGoStreamingWithUsage(t *testing.T) {
	ts := newTestServer(t, serverOptions{})
	client := openaiClient(ts)
	stream := client.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
		Model:         "scripted",
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("[[say:streamed ünïcode 🦀 text]]")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	})
	acc := openai.ChatCompletionAccumulator{}
	chunks := 0
	for stream.Next() {
		acc.AddChunk(stream.Current())
		chunks++
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if got := acc.Choices[0].Message.Content; got != "streamed ünïcode 🦀 text" {
		t.Fatalf("content %q", got)
	}
	if chunks < 10 {
		t.Fatalf("%d chunks: the answer was not streamed token by token", chunks)
	}
	if acc.Choices[0].FinishReason != "stop" {
		t.Fatalf("finish %q", acc.Choices[0].FinishReason)
	}
	turn, err := ts.store.Turn(context.Background(), acc.ID)
	if err != nil {
		t.Fatal(err)
	}
	if acc.Usage.CompletionTokens != int64(len(turn.ResponseIDs)) || acc.Usage.TotalTokens != acc.Usage.PromptTokens+acc.Usage.CompletionTokens || acc.Usage.PromptTokens == 0 {
		t.Fatalf("usage %+v, recorded %d response ids", acc.Usage, len(turn.ResponseIDs))
	}
}

func TestOpenAIGoStreamingToolCalls(t *testing.T) {
	ts := newTestServer(t, serverOptions{})
	client := openaiClient(ts, option.WithHeader("X-Session-Id", "go-sdk"))
	ctx := context.Background()
	params := openai.ChatCompletionNewParams{
		Model: "scripted",
		Messages: []openai.ChatCompletionMessageParamUnion{
			openai.UserMessage(`look around [[tool:ls {"path":"."}]][[tool:ls {"path":"/tmp"}]]`),
		},
		Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: "ls", Description: openai.String("list files"),
			Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}},
		})},
	}
	stream := client.Chat.Completions.NewStreaming(ctx, params)
	acc := openai.ChatCompletionAccumulator{}
	var finished []openai.FinishedChatCompletionToolCall
	for stream.Next() {
		acc.AddChunk(stream.Current())
		if tc, ok := acc.JustFinishedToolCall(); ok {
			finished = append(finished, tc)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if len(finished) != 2 || finished[0].Name != "ls" || finished[0].Arguments != `{"path":"."}` || finished[1].Arguments != `{"path":"/tmp"}` {
		t.Fatalf("finished tool calls %+v", finished)
	}
	if acc.Choices[0].FinishReason != "tool_calls" {
		t.Fatalf("finish %q", acc.Choices[0].FinishReason)
	}
	for _, tc := range acc.Choices[0].Message.ToolCalls {
		if tc.ID == "" || strings.Trim(tc.ID, alnum) != "" {
			t.Fatalf("tool call id %q is not alphanumeric", tc.ID)
		}
	}
	// Send the tool results back: the next answer reports them, and the
	// first turn gets the tool results as its next state.
	params.Messages = append(params.Messages, acc.Choices[0].Message.ToParam())
	for i, tc := range acc.Choices[0].Message.ToolCalls {
		params.Messages = append(params.Messages, openai.ToolMessage([]string{"a.txt b.txt", "x.log"}[i], tc.ID))
	}
	resp, err := client.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Choices[0].Message.Content != "tool said: x.log" {
		t.Fatalf("answer after tool results %q", resp.Choices[0].Message.Content)
	}
	first, err := ts.store.Turn(ctx, acc.ID)
	if err != nil {
		t.Fatal(err)
	}
	if first.State != store.Observed || first.NextStateKind != store.NextTool || len(first.NextState) != 2 || first.NextState[0].Content != "a.txt b.txt" {
		t.Fatalf("first turn: state %s next %s %+v", first.State, first.NextStateKind, first.NextState)
	}
	second, err := ts.store.Turn(ctx, resp.ID)
	if err != nil {
		t.Fatal(err)
	}
	if second.SessionID != first.SessionID || second.Index != first.Index+1 {
		t.Fatalf("second turn in session %s index %d, first in %s index %d", second.SessionID, second.Index, first.SessionID, first.Index)
	}
}
