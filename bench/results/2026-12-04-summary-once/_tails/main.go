// Command _tails reads the samples a tldr run trained on from its kept
// store (bench learn --keep-data) and counts, for each version, the liked
// answers (RL term, reward > 0) and the others, and of each how many say
// "TL" again after their first line (a second TL;DR, whole or cut):
//
//	go run ./bench/results/2026-12-04-summary-once/_tails [--show V] STORE.db...
//
// --show V prints the student's answer and the teacher's response of every
// sample version V trained on. The token ids are decoded with the 1.5B
// coder's tokenizer, read from its GGUF in the model cache.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/clawrl/clawrl/gguf"
	"github.com/clawrl/clawrl/store"
	"github.com/clawrl/clawrl/store/sqlite"
	"github.com/clawrl/clawrl/tokenizer"
)

func main() {
	show := flag.Int64("show", 0, "print the samples this version trained on")
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
	ctx := context.Background()
	for _, path := range flag.Args() {
		st, err := sqlite.Open(ctx, path, sqlite.Options{ReadOnly: true})
		if err != nil {
			fail(err)
		}
		samples, err := st.ListSamples(ctx, store.TurnFilter{})
		if err != nil {
			fail(err)
		}
		type count struct{ liked, likedTail, other, otherTail int }
		by := map[int64]*count{}
		var last int64
		for _, s := range samples {
			t, err := st.Turn(ctx, s.TurnID)
			if err != nil {
				fail(err)
			}
			text := tok.Decode(t.ResponseIDs)
			_, rest, _ := strings.Cut(text, "\n")
			tail := strings.Contains(rest, "TL")
			v := s.TrainedVersion
			if by[v] == nil {
				by[v] = &count{}
			}
			last = max(last, v)
			c := by[v]
			if s.UseRL && s.Reward > 0 {
				c.liked++
				if tail {
					c.likedTail++
				}
			} else {
				c.other++
				if tail {
					c.otherTail++
				}
			}
			if *show != 0 && v == *show {
				fmt.Printf("--- v%d reward %+g rl %v\n  answer:  %q\n  teacher: %q\n", v, s.Reward, s.UseRL, text, tok.Decode(s.TeacherResponseIDs))
			}
		}
		st.Close()
		fmt.Println(path)
		for v := int64(1); v <= last; v++ {
			if c := by[v]; c != nil {
				fmt.Printf("  v%d: liked %d (a second TL in %d), others %d (%d)\n", v, c.liked, c.likedTail, c.other, c.otherTail)
			}
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
