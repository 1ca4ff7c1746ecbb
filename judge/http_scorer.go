package judge

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/clawrl/clawrl/chat"
)

// HTTPScorer reads next-token log-probabilities from any OpenAI-compatible
// endpoint (--judge-url) through a chat completion's logprobs: it asks for
// a short greedy answer with top_logprobs and reads the alternatives at the
// position after begun. The server cannot be handed a begun answer, so the
// answer must begin with begun by itself (the prompt asks for that); ""
// reads the first position. It is its own type, not a method of
// HTTPBackend, so that an HTTP judge keeps its sampled votes for verdicts.
type HTTPScorer struct {
	*HTTPBackend
}

// NextLogprobs implements NextTokenScorer. A candidate matches the
// reported alternative whose text is the candidate (as EngineBackend reads
// the candidate's first token: list " Yes" beside "Yes" to count both);
// one that matches none gets the smallest reported logprob, as
// EngineBackend does.
func (s HTTPScorer) NextLogprobs(ctx context.Context, msgs []chat.Message, begun string, candidates []string) ([]float64, error) {
	maxTokens := 1
	if begun != "" {
		// Enough tokens to write begun and the token after it.
		maxTokens = len(begun) + 1
	}
	req := logprobsRequest{chatRequest: newChatRequest(s.Model, msgs, 0, maxTokens, nil), Logprobs: true, TopLogprobs: verdictTopLogprobs}
	data, err := postChat(ctx, s.Client, s.URL, s.Key, req, maxJudgeBody, "judge")
	if err != nil {
		return nil, err
	}
	top, err := ParseTopLogprobsAfter(data, begun)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(candidates))
	floor := math.Inf(1)
	for _, t := range top {
		floor = min(floor, t.Logprob)
	}
	for i, c := range candidates {
		out[i] = floor
		for _, t := range top {
			if t.Token == c {
				out[i] = t.Logprob
				break
			}
		}
	}
	return out, nil
}

// logprobsRequest is a chat request that asks for the chosen tokens'
// logprobs and their top alternatives.
type logprobsRequest struct {
	chatRequest
	Logprobs    bool `json:"logprobs"`
	TopLogprobs int  `json:"top_logprobs"`
}

// TopLogprob is one alternative at a position of a chat completion.
type TopLogprob struct {
	Token   string
	Logprob float64
}

// ParseTopLogprobsAfter reads a chat completion body with logprobs and
// returns the alternatives at the first position after the answer's text
// has spelt begun (the first position when begun is ""). An answer that
// does not begin with begun, or ends before the position, is an error.
func ParseTopLogprobsAfter(data []byte, begun string) ([]TopLogprob, error) {
	var out struct {
		Choices []struct {
			Logprobs *struct {
				Content []struct {
					Token       string  `json:"token"`
					Logprob     float64 `json:"logprob"`
					TopLogprobs []struct {
						Token   string  `json:"token"`
						Logprob float64 `json:"logprob"`
					} `json:"top_logprobs"`
				} `json:"content"`
			} `json:"logprobs"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("judge logprobs %q: %w", clip(string(data), 200), err)
	}
	if len(out.Choices) == 0 || out.Choices[0].Logprobs == nil || len(out.Choices[0].Logprobs.Content) == 0 {
		return nil, fmt.Errorf("judge logprobs %q: no logprobs (does the server support logprobs and top_logprobs?)", clip(string(data), 200))
	}
	content := out.Choices[0].Logprobs.Content
	var text strings.Builder
	for i, c := range content {
		if strings.TrimSpace(text.String()) == begun {
			var top []TopLogprob
			for _, t := range c.TopLogprobs {
				top = append(top, TopLogprob{Token: t.Token, Logprob: t.Logprob})
			}
			if len(top) == 0 {
				// A server that reports only the chosen token.
				top = []TopLogprob{{Token: c.Token, Logprob: c.Logprob}}
			}
			for _, t := range top {
				if math.IsNaN(t.Logprob) {
					return nil, fmt.Errorf("judge logprobs: NaN at position %d", i)
				}
			}
			return top, nil
		}
		text.WriteString(c.Token)
		if !strings.HasPrefix(begun, strings.TrimSpace(text.String())) {
			break
		}
	}
	return nil, fmt.Errorf("judge logprobs: the answer %q does not begin with %q", clip(text.String(), 80), begun)
}
