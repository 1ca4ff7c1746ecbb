// Command _unfinished counts, in kept bench learn stores, the samples that
// trained on a teacher-written answer and how many of those the teacher
// did not finish (cut at --teacher-max-tokens: no end-of-turn token), by
// persona, and how many of them loop (rl.Loops):
//
//	go run ./bench/results/2026-12-06-unfinished/_unfinished STORE.db...
//
// The persona is read from the store's folder name (data-ARM-PERSONA-SEED).
// The token ids are decoded with the 1.5B coder's tokenizer, read from its
// GGUF in the model cache (-show prints every unfinished answer).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/clawrl/clawrl/gguf"
	"github.com/clawrl/clawrl/rl"
	"github.com/clawrl/clawrl/store"
	"github.com/clawrl/clawrl/store/sqlite"
	"github.com/clawrl/clawrl/tokenizer"
)

func main() {
	show := flag.Bool("show", false, "print every unfinished teacher answer")
	flag.Parse()
	cache, err := os.UserCacheDir()
	if err != nil {
		fail(err)
	}
	f, err := gguf.Open(filepath.Join(cache, "clawrl", "models", "Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf"))
	if err != nil {
		fail(err)
	}
	tok, err := tokenizer.FromGGUF(f.Header)
	if err != nil {
		fail(err)
	}
	end := map[int32]bool{}
	for _, s := range []string{"<|im_end|>", "<|endoftext|>"} {
		if id, ok := tok.TokenID(s); ok {
			end[id] = true
		}
	}
	type count struct{ wrote, unfinished, liked, runs, loopsUnfinished, loopsFinished int }
	by := map[string]*count{}
	ctx := context.Background()
	for _, path := range flag.Args() {
		dir := filepath.Base(filepath.Dir(path))
		parts := strings.Split(dir, "-")
		persona := parts[len(parts)-2]
		st, err := sqlite.Open(ctx, path, sqlite.Options{ReadOnly: true})
		if err != nil {
			fail(err)
		}
		samples, err := st.ListSamples(ctx, store.TurnFilter{})
		if err != nil {
			fail(err)
		}
		c := by[persona]
		if c == nil {
			c = &count{}
			by[persona] = c
		}
		c.runs++
		for _, s := range samples {
			if s.TrainedVersion == 0 {
				continue
			}
			if s.UseRL && s.Reward > 0 {
				c.liked++
			}
			ids := s.TeacherResponseIDs
			if len(ids) == 0 {
				continue
			}
			c.wrote++
			loops := rl.Loops(tok.Decode(ids))
			if !end[ids[len(ids)-1]] {
				c.unfinished++
				if loops {
					c.loopsUnfinished++
				}
				if *show {
					fmt.Printf("--- %s v%d, %d tokens\n%q\n", dir, s.TrainedVersion, len(ids), tok.Decode(ids))
				}
			} else if loops {
				c.loopsFinished++
			}
		}
		st.Close()
	}
	names := make([]string, 0, len(by))
	for p := range by {
		names = append(names, p)
	}
	sort.Strings(names)
	fmt.Println("persona   runs  liked-trained  teacher-written  unfinished        of them loop (rl.Loops)  finished that loop")
	for _, p := range names {
		c := by[p]
		fmt.Printf("%-9s %4d  %13d  %15d  %10d (%3.0f %%)  %23d  %18d\n", p, c.runs, c.liked, c.wrote, c.unfinished, 100*float64(c.unfinished)/float64(max(c.wrote, 1)), c.loopsUnfinished, c.loopsFinished)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
