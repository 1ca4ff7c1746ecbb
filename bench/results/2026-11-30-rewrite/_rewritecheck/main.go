// Command _rewritecheck measures --written-hint rewrite at the teacher: for
// each persona's held-out prompts it takes an answer the user dislikes, the
// feedback the user writes about it (Persona.Complaint, as bench learn
// --specific-feedback says it), the judge's rewrite of that feedback with
// the answer in view (judge.Judge under judge.WrittenRewrite, through the
// server's chat API), and then asks the teacher the question with each hint
// (judge.TeacherPromptAt, the user placement, as the loop's teacher reads
// it: without the answer), greedily and -draws times at temperature 1.
//
// The disliked answer: for tldr, a summary line over 25 words (sampled at
// temperature 1 under the general critique, up to 8 draws, so that the
// user says the specific complaint); for the others, the model's greedy
// answer with no hint (skipped when the user already likes it).
//
//	clawrl serve --method off --model qwen2.5-coder-1.5b --addr 127.0.0.1:30556 &
//	go run ./bench/results/2026-11-30-rewrite/_rewritecheck -url http://127.0.0.1:30556 -personas tldr
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"

	"github.com/clawrl/clawrl/bench"
	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/judge"
	"github.com/clawrl/clawrl/store"
)

func main() {
	url := flag.String("url", "http://127.0.0.1:30556", "the model's server (student, judge and teacher)")
	draws := flag.Int("draws", 2, "sampled teacher answers per prompt and hint, beside the greedy one")
	n := flag.Int("prompts", 20, "held-out prompts per persona")
	miss := flag.String("miss", "", "with tldr: the user's words for a summary line over 25 words, in place of the persona's")
	only := flag.Bool("rewrite-only", false, "print the rewrites alone; ask the teacher nothing")
	names := flag.String("personas", "tldr,concise,signoff,french", "personas")
	flag.Parse()
	ctx := context.Background()
	cl := &bench.Client{BaseURL: *url}
	jd := judge.New(&judge.HTTPBackend{URL: *url + "/v1", Model: "clawrl"}, judge.Config{Written: judge.WrittenRewrite, Retries: judge.NoRetries}, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	ask := func(msgs []chat.Message, temp float64, seed int64) bench.Answer {
		var req []bench.Message
		for _, m := range msgs {
			req = append(req, bench.Message{Role: string(m.Role), Content: m.Content})
		}
		a, err := cl.Chat(ctx, bench.ChatRequest{Side: true, Messages: req, MaxTokens: 64, Temperature: temp, Seed: &seed})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return a
	}
	hinted := func(q, hint string) []chat.Message {
		m, err := judge.TeacherPromptAt([]chat.Message{{Role: chat.RoleUser, Content: q}}, hint, judge.HintInUser)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return m
	}
	fmt.Println("| persona | prompts | hint | liked, greedy | liked, draws | first line > 25 words, all | cut at 64, all |")
	fmt.Println("|---|--:|---|--:|--:|--:|--:|")
	var log strings.Builder
	for _, p := range bench.Personas() {
		if !strings.Contains(","+*names+",", ","+p.Name+",") {
			continue
		}
		type row struct {
			q, answer, feedback, rewrite, raw string
			liked                             [2][]bool // [as-is, rewrite][greedy, draws…]
			over, cut                         [2]int
		}
		rows := make([]*row, min(*n, len(p.Eval)))
		var wg sync.WaitGroup
		sem := make(chan struct{}, 4)
		for i := range rows {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				q := p.Eval[i]
				var a bench.Answer
				found := false
				if len(p.Misses) > 0 {
					for d := range 8 {
						a = ask(hinted(q, p.Critique), 1, int64(7000+100*i+d))
						if p.Misses[0].When(a.Text) {
							found = true
							break
						}
					}
				} else {
					a = ask([]chat.Message{{Role: chat.RoleUser, Content: q}}, 0, 1)
					found = !p.Satisfied(a)
				}
				if !found {
					return
				}
				fb, _ := p.Complaint(a.Text)
				if *miss != "" && len(p.Misses) > 0 {
					fb = *miss
				}
				in := judge.Input{TurnID: fmt.Sprint(i), Messages: []chat.Message{{Role: chat.RoleUser, Content: q}},
					Response: chat.Message{Role: chat.RoleAssistant, Content: a.Text}, NextKind: store.NextFeedback, FeedbackRating: -1, FeedbackText: fb}
				j, err := jd.Judge(ctx, in, judge.Request{Score: true, Hint: true})
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(1)
				}
				r := &row{q: q, answer: a.Text, feedback: fb, rewrite: j.Hint}
				for _, v := range j.Votes {
					if v.Source == "rewrite" {
						r.raw = v.Raw
					}
				}
				for h, hint := range []string{fb, j.Hint} {
					if *only {
						break
					}
					for d := 0; d <= *draws; d++ {
						temp := 0.0
						if d > 0 {
							temp = 1
						}
						t := ask(hinted(q, hint), temp, int64(1000*i+d))
						r.liked[h] = append(r.liked[h], p.Satisfied(t))
						first, _, _ := strings.Cut(strings.TrimLeft(t.Text, " \t\r\n*_#>"), "\n")
						if bench.Words(first) > 25 {
							r.over[h]++
						}
						if !t.Finished {
							r.cut[h]++
						}
					}
				}
				rows[i] = r
			}()
		}
		wg.Wait()
		var k int
		var greedy, sampled, over, cut [2]int
		for _, r := range rows {
			if r == nil {
				continue
			}
			k++
			for h := range 2 {
				for d, ok := range r.liked[h] {
					switch {
					case ok && d == 0:
						greedy[h]++
					case ok:
						sampled[h]++
					}
				}
				over[h] += r.over[h]
				cut[h] += r.cut[h]
			}
			fmt.Fprintf(&log, "## %s: %s\nanswer:   %q\nfeedback: %q\nrewrite:  %q\njudge:    %q\n\n", p.Name, r.q, r.answer, r.feedback, r.rewrite, r.raw)
		}
		for h, name := range []string{"as written", "rewritten"} {
			fmt.Printf("| %s | %d | %s | %d/%d | %d/%d | %d | %d |\n", p.Name, k, name, greedy[h], k, sampled[h], k**draws, over[h], cut[h])
		}
	}
	fmt.Println()
	fmt.Print(log.String())
}
