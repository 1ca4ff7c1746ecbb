// margin prints, for each retention question given, the base model's greedy
// answer with the top alternatives at its first tokens, and the summed
// log-probability of that answer against the refusal the french runs'
// students gave ("I'm sorry, but I can't assist with that.").
//
//	go run ./bench/results/2026-11-28-relevance/_margin GGUF "Who wrote Romeo and Juliet?" …
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/engine/native"
)

const refusal = "I'm sorry, but I can't assist with that."

func main() {
	eng, err := native.Open(os.Args[1], native.Options{})
	if err != nil {
		panic(err)
	}
	defer eng.Close()
	ctx := context.Background()
	f := eng.Format()
	for _, q := range os.Args[2:] {
		text, err := f.Render([]chat.Message{{Role: chat.RoleUser, Content: q}}, nil, engine.RenderOptions{AddGenerationPrompt: true})
		if err != nil {
			panic(err)
		}
		prompt := f.Encode(text)
		var ids []int32
		var toks []engine.Token
		_, err = eng.Generate(ctx, engine.GenerateRequest{PromptIDs: prompt, MaxTokens: 24, TopLogprobs: 5, Adapter: engine.AdapterBase},
			func(t engine.Token) error {
				ids = append(ids, t.ID)
				toks = append(toks, t)
				return nil
			})
		if err != nil {
			panic(err)
		}
		fmt.Printf("%q\n  greedy: %q\n", q, f.Decode(ids))
		for i, t := range toks[:min(3, len(toks))] {
			fmt.Printf("  token %d:", i)
			for _, a := range t.Top {
				fmt.Printf(" %q %.2f", f.Decode([]int32{a.ID}), a.Logprob)
			}
			fmt.Println()
		}
		for _, c := range []struct {
			name string
			ids  []int32
		}{{"greedy (24 tokens)", ids}, {"refusal", append(f.Encode(refusal), f.StopIDs()[0])}} {
			s, err := eng.Score(ctx, engine.ScoreRequest{PromptIDs: prompt, CompletionIDs: c.ids, Adapter: engine.AdapterBase})
			if err != nil {
				panic(err)
			}
			sum := 0.0
			for _, l := range s.Logprobs[:min(len(s.Logprobs), 10)] {
				sum += float64(l)
			}
			fmt.Printf("  log p of the first 10 tokens of %s: %.2f\n", c.name, sum)
		}
	}
}
