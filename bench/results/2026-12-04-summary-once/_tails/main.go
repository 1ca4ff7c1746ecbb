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
	"database/sql"
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/clawrl/clawrl/gguf"
	"github.com/clawrl/clawrl/tokenizer"
	_ "modernc.org/sqlite"
)

func ids(b []byte) []int32 {
	out := make([]int32, len(b)/4)
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func main() {
	show := flag.Int("show", 0, "print the samples this version trained on")
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
	for _, path := range flag.Args() {
		db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
		if err != nil {
			fail(err)
		}
		rows, err := db.Query(`select s.trained_version, s.use_rl, s.reward, p.response_ids, s.teacher_response_ids
			from samples s join turns t on t.id = s.turn_id join turn_payloads p on p.turn_seq = t.seq order by s.created_at`)
		if err != nil {
			fail(err)
		}
		type count struct{ liked, likedTail, other, otherTail int }
		by := map[int]*count{}
		last := 0
		for rows.Next() {
			var v, rl int
			var r float64
			var resp, teacher []byte
			if err := rows.Scan(&v, &rl, &r, &resp, &teacher); err != nil {
				fail(err)
			}
			text := tok.Decode(ids(resp))
			_, rest, _ := strings.Cut(text, "\n")
			tail := strings.Contains(rest, "TL")
			if by[v] == nil {
				by[v] = &count{}
			}
			last = max(last, v)
			c := by[v]
			if rl == 1 && r > 0 {
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
				fmt.Printf("--- v%d reward %+g rl %d\n  answer:  %q\n  teacher: %q\n", v, r, rl, text, tok.Decode(ids(teacher)))
			}
		}
		if err := rows.Err(); err != nil {
			fail(err)
		}
		db.Close()
		fmt.Println(path)
		for v := 1; v <= last; v++ {
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
