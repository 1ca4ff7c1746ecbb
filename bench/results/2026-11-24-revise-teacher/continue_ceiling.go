//go:build ignore

// Teacher ceilings of --hint-placement continue, which bench teacher cannot
// ask (clawrl's chat API has no assistant prefill): the loop's own
// judge.Teacher.Write on the native engine, in process. For each persona's
// held-out prompts, the model's greedy answer (no hint, ≤ 64 tokens) is
// continued by the teacher (hint in the user message, ≤ 64 more tokens) and
// the whole answer is scored by the persona's checker; the retention facts
// likewise (the facts' answers ≤ 24 tokens, continued ≤ 24).
//
//	go run bench/results/2026-11-24-revise-teacher/continue_ceiling.go ~/.cache/clawrl/models/SmolLM2-135M-Instruct.Q4_1.gguf [placement]
package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/clawrl/clawrl/bench"
	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/engine/native"
	"github.com/clawrl/clawrl/judge"
)

func main() {
	eng, err := native.Open(os.Args[1], native.Options{})
	if err != nil {
		panic(err)
	}
	at := judge.HintAsContinuation
	if len(os.Args) > 2 {
		at = judge.HintPlacement(os.Args[2])
	}
	ctx := context.Background()
	f := eng.Format()
	answer := func(ids []int32) bench.Answer {
		ended := len(ids) > 0 && slices.Contains(f.StopIDs(), ids[len(ids)-1])
		if ended {
			ids = ids[:len(ids)-1]
		}
		return bench.Answer{Text: strings.TrimSpace(f.Decode(ids)), Finished: ended}
	}
	// ask returns the student's answer and the teacher's for one question.
	ask := func(q, hint string, maxTokens int) (bench.Answer, bench.Answer) {
		msgs := []chat.Message{{Role: chat.RoleUser, Content: q}}
		prompt, err := f.Render(msgs, nil, chat.RenderOptions{AddGenerationPrompt: true})
		if err != nil {
			panic(err)
		}
		g, err := eng.Generate(ctx, engine.GenerateRequest{PromptIDs: f.Encode(prompt), MaxTokens: maxTokens}, func(engine.Token) error { return nil })
		if err != nil {
			panic(err)
		}
		var ids []int32
		for _, t := range g.Tokens {
			ids = append(ids, t.ID)
		}
		teacher := (&judge.Teacher{Engine: eng, Adapter: engine.AdapterCurrent, Placement: at}).WithAnswer(
			chat.Message{Role: chat.RoleAssistant, Content: answer(ids).Text}, ids)
		w, _, _, err := teacher.Write(ctx, msgs, nil, prompt, hint, maxTokens)
		if err != nil {
			panic(err)
		}
		return answer(ids), answer(w)
	}
	for _, p := range bench.Personas() {
		var mu sync.Mutex
		ok, facts, words := 0, 0, 0
		sem := make(chan struct{}, 4)
		var wg sync.WaitGroup
		lines := make([]string, len(p.Eval)+len(bench.Retention))
		for i, q := range p.Eval {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				s, t := ask(q, p.Critique, 64)
				mu.Lock()
				defer mu.Unlock()
				if p.Satisfied(t) {
					ok++
				}
				words += bench.Words(t.Text)
				lines[i] = fmt.Sprintf("%s %v | S: %q\n   T: %q", p.Name, p.Satisfied(t), s.Text, t.Text)
			}()
		}
		for i, fact := range bench.Retention {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				_, t := ask(fact.Question, p.Critique, 24)
				mu.Lock()
				defer mu.Unlock()
				if fact.Correct(t.Text) {
					facts++
				}
				lines[len(p.Eval)+i] = fmt.Sprintf("%s fact %v | %s -> %q", p.Name, fact.Correct(t.Text), fact.Question, t.Text)
			}()
		}
		wg.Wait()
		for _, l := range lines {
			fmt.Println(l)
		}
		fmt.Printf("SUMMARY %s placement=%s satisfied %d/%d words %.0f facts %d/%d\n", p.Name, at, ok, len(p.Eval), float64(words)/float64(len(p.Eval)), facts, len(bench.Retention))
	}
}
