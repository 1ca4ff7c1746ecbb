// gainsum re-picks recorded best-of-N teacher draws (`clawrl bench teacher
// --samples N --samples-out F`, whose draws keep the mean per-token hint
// gain) by the mean, as the loop does, and by the total over the answer's
// tokens (mean × tokens in the gain model's tokenizer, its stop token after
// a finished answer), judge.Refuse applied to both, and counts the picks
// each persona's simulated user would like (bench.Persona.Satisfied) and
// their mean length in words.
//
//	go run ./bench/results/2026-11-28-mixed/_gainsum GAIN_MODEL.gguf DRAWS.json...
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"

	"github.com/clawrl/clawrl/bench"
	"github.com/clawrl/clawrl/gguf"
	"github.com/clawrl/clawrl/judge"
	"github.com/clawrl/clawrl/tokenizer"
)

func main() {
	f, err := gguf.Open(os.Args[1])
	if err != nil {
		panic(err)
	}
	tok, err := tokenizer.FromGGUF(f.Header)
	if err != nil {
		panic(err)
	}
	personas := map[string]*bench.Persona{}
	for _, p := range bench.Personas() {
		personas[p.Name] = p
	}
	for _, file := range os.Args[2:] {
		raw, err := os.ReadFile(file)
		if err != nil {
			panic(err)
		}
		var rec struct {
			Samples int                     `json:"samples"`
			Draws   map[string][]bench.Draw `json:"draws"`
		}
		if err := json.Unmarshal(raw, &rec); err != nil {
			panic(err)
		}
		var names []string
		for n := range rec.Draws {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, name := range names {
			p, draws := personas[name], rec.Draws[name]
			type pick struct {
				liked, words, n int
			}
			var byMean, byTotal pick
			for i := 0; i+rec.Samples <= len(draws); i += rec.Samples {
				bestM, bestT := -1, -1
				var m, t float64
				for k := i; k < i+rec.Samples; k++ {
					d := draws[k]
					if d.GainErr != "" || judge.Refuse(d.Text, p.Critique) != "" {
						continue
					}
					n := len(tok.Encode(d.Text))
					if d.Finished {
						n++
					}
					total := d.Gain * float64(n)
					if bestM < 0 || d.Gain > m {
						bestM, m = k, d.Gain
					}
					if bestT < 0 || total > t {
						bestT, t = k, total
					}
				}
				for _, c := range []struct {
					at  int
					acc *pick
				}{{bestM, &byMean}, {bestT, &byTotal}} {
					if c.at < 0 {
						continue
					}
					d := draws[c.at]
					c.acc.n++
					c.acc.words += d.Words
					if p.Satisfied(bench.Answer{Text: d.Text, Finished: d.Finished}) {
						c.acc.liked++
					}
				}
			}
			fmt.Printf("%s %-8s by mean %2d/%d liked, %4.1f words; by total %2d/%d liked, %4.1f words\n", file, name,
				byMean.liked, byMean.n, float64(byMean.words)/float64(max(byMean.n, 1)), byTotal.liked, byTotal.n, float64(byTotal.words)/float64(max(byTotal.n, 1)))
		}
	}
}
