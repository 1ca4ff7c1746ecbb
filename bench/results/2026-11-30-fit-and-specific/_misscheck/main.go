// Command _misscheck asks a teacher server the tldr persona's 20 held-out
// prompts with each of its written feedbacks in context, as the loop's
// teacher gets them (judge.TeacherPromptAt, the user placement): the
// general critique and the one --specific-feedback sends for a summary line
// over 25 words. Each prompt greedily and -draws times at temperature 1
// (seeded), at most 64 tokens; it prints how many answers the user likes
// and how long their first lines are, per feedback:
//
//	clawrl serve --method off --model qwen2.5-coder-1.5b --addr 127.0.0.1:30555 &
//	go run ./bench/results/2026-11-30-fit-and-specific/_misscheck -url http://127.0.0.1:30555
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/clawrl/clawrl/bench"
	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/judge"
)

func main() {
	url := flag.String("url", "http://127.0.0.1:30555", "teacher server")
	draws := flag.Int("draws", 4, "sampled answers per prompt and feedback, beside the greedy one")
	flag.Parse()
	var p *bench.Persona
	for _, q := range bench.Personas() {
		if q.Name == "tldr" {
			p = q
		}
	}
	cl := &bench.Client{BaseURL: *url}
	feedbacks := []struct{ name, text string }{{"general", p.Critique}, {"specific", p.Misses[0].Critique}}
	type job struct {
		fb, prompt, draw int
	}
	type result struct {
		liked, words int
		finished     bool
		text         string
	}
	res := map[job]result{}
	var mu sync.Mutex
	jobs := make(chan job)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				msgs, err := judge.TeacherPromptAt([]chat.Message{{Role: chat.RoleUser, Content: p.Eval[j.prompt]}}, feedbacks[j.fb].text, judge.HintInUser)
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(1)
				}
				var req []bench.Message
				for _, m := range msgs {
					req = append(req, bench.Message{Role: string(m.Role), Content: m.Content})
				}
				temp, seed := 0.0, int64(1000*j.prompt+j.draw)
				if j.draw > 0 {
					temp = 1
				}
				a, err := cl.Chat(context.Background(), bench.ChatRequest{Side: true, Messages: req, MaxTokens: 64, Temperature: temp, Seed: &seed})
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(1)
				}
				first, _, _ := strings.Cut(strings.TrimLeft(a.Text, " \t\r\n*_#>"), "\n")
				r := result{words: bench.Words(first), finished: a.Finished, text: a.Text}
				if p.Satisfied(a) {
					r.liked = 1
				}
				mu.Lock()
				res[j] = r
				mu.Unlock()
			}
		}()
	}
	for fb := range feedbacks {
		for i := range p.Eval {
			for d := 0; d <= *draws; d++ {
				jobs <- job{fb, i, d}
			}
		}
	}
	close(jobs)
	wg.Wait()
	fmt.Println("| feedback | answers | liked | starts with TL;DR: | first line > 25 words | first line words, median | cut at 64 |")
	fmt.Println("|---|--:|--:|--:|--:|--:|--:|")
	for fb, f := range feedbacks {
		for _, greedy := range []bool{true, false} {
			var n, liked, tldr, over, cut int
			var words []int
			for j, r := range res {
				if j.fb != fb || (j.draw == 0) != greedy {
					continue
				}
				n++
				liked += r.liked
				if bench.StartsWith("TL;DR:", 1<<30)(r.text) {
					tldr++
					if r.words > 25 {
						over++
					}
					words = append(words, r.words)
				}
				if !r.finished {
					cut++
				}
			}
			sort.Ints(words)
			med := 0
			if len(words) > 0 {
				med = words[len(words)/2]
			}
			kind := "greedy"
			if !greedy {
				kind = fmt.Sprintf("%d draws at T=1", *draws)
			}
			fmt.Printf("| %s, %s | %d | %d | %d | %d | %d | %d |\n", f.name, kind, n, liked, tldr, over, med, cut)
		}
	}
	for _, fb := range []int{0, 1} {
		fmt.Printf("\n%s, greedy, first three:\n", feedbacks[fb].name)
		for i := range 3 {
			fmt.Printf("  %q\n", res[job{fb, i, 0}].text)
		}
	}
}
