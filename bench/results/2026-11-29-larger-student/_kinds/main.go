// Command _kinds sorts the held-out answers recorded in learn.json files by
// the simulated users' own checks: talk (bench.Evades: a refusal, an
// apology, "Bien sûr, je serai heureux de vous répondre en français."),
// French (bench.French, not talk) and the rest, per version, beside the
// recorded count of liked answers and of answers cut off at the token
// budget (not finished, whatever their kind):
//
//	go run ./bench/results/2026-11-29-larger-student/_kinds RUN/learn.json...
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/clawrl/clawrl/bench"
)

func main() {
	for _, path := range os.Args[1:] {
		b, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		var f struct {
			Runs []bench.Run `json:"runs"`
		}
		if err := json.Unmarshal(b, &f); err != nil {
			fmt.Fprintln(os.Stderr, path+":", err)
			os.Exit(1)
		}
		for _, r := range f.Runs {
			fmt.Printf("%s %s %s seed %d\n  version  liked  cut  talk  french  other\n", path, r.Arm, r.Persona, r.Seed)
			for _, e := range r.Evals {
				var cut, talk, french, other int
				for _, a := range e.HeldOut {
					if !a.Finished {
						cut++
					}
					switch {
					case bench.Evades(a.Text):
						talk++
					case bench.French(a.Text):
						french++
					default:
						other++
					}
				}
				fmt.Printf("  v%-7d %5d %4d %5d %7d %6d\n", e.PolicyVersion, e.Satisfied, cut, talk, french, other)
			}
		}
	}
}
