// Command _rescore scores the held-out answers recorded in learn.json files
// again with the personas' checks as they are now (bench.Persona.Satisfied,
// with Evades), and prints each run's k/20 per version before and after
// (runs whose file kept no held-out answers are left out):
//
//	go run ./bench/results/2026-11-28-repair/_rescore FILE...
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/clawrl/clawrl/bench"
)

type file struct {
	Runs []struct {
		Arm, Persona string
		Seed         int
		Evals        []struct {
			PolicyVersion int64 `json:"policy_version"`
			Satisfied     int
			HeldOut       []bench.Answer `json:"held_out"`
		}
	}
}

func main() {
	ps := map[string]*bench.Persona{}
	for _, p := range bench.Personas() {
		ps[p.Name] = p
	}
	var oldSum, newSum, n int
	for _, path := range os.Args[1:] {
		b, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		var f file
		if err := json.Unmarshal(b, &f); err != nil {
			fmt.Fprintln(os.Stderr, path, err)
			os.Exit(1)
		}
		for _, r := range f.Runs {
			p := ps[r.Persona]
			if p == nil {
				continue
			}
			var was, now []string
			recorded := len(r.Evals) > 0
			for _, e := range r.Evals {
				recorded = recorded && len(e.HeldOut) > 0
			}
			if !recorded { // files before the answers were kept
				continue
			}
			for _, e := range r.Evals {
				k := 0
				for _, a := range e.HeldOut {
					if p.Satisfied(a) {
						k++
					}
				}
				was = append(was, fmt.Sprint(e.Satisfied))
				now = append(now, fmt.Sprint(k))
				oldSum += e.Satisfied
				newSum += k
				n += len(e.HeldOut)
			}
			fmt.Printf("%s %s %s seed %d: %s → %s\n", path, r.Arm, r.Persona, r.Seed, strings.Join(was, ","), strings.Join(now, ","))
		}
	}
	fmt.Printf("all: %d → %d satisfied of %d held-out answers\n", oldSum, newSum, n)
}
