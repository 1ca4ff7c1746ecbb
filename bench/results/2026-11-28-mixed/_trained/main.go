// trained reads the teacher answers a kept bench store trained on and
// scores each with its persona's checks as the simulated user would read it
// (bench.Persona.Satisfied, the stop token taken as a finished answer), and
// bench.Evades alone: per trained version, how many of the trained teacher
// answers the user would have liked, and how many evade.
//
//	go run ./bench/results/2026-11-28-mixed/_trained PERSONA MODEL.gguf STORE_DIR...
package main

import (
	"database/sql"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	_ "modernc.org/sqlite"

	"github.com/clawrl/clawrl/bench"
	"github.com/clawrl/clawrl/gguf"
	"github.com/clawrl/clawrl/tokenizer"
)

func main() {
	if len(os.Args) < 4 {
		fmt.Fprintln(os.Stderr, "usage: trained PERSONA MODEL.gguf STORE_DIR...")
		os.Exit(2)
	}
	var p *bench.Persona
	for _, q := range bench.Personas() {
		if q.Name == os.Args[1] {
			p = q
		}
	}
	if p == nil {
		panic("no persona " + os.Args[1])
	}
	f, err := gguf.Open(os.Args[2])
	if err != nil {
		panic(err)
	}
	tok, err := tokenizer.FromGGUF(f.Header)
	if err != nil {
		panic(err)
	}
	verbose := os.Getenv("VERBOSE") != ""
	for _, dir := range os.Args[3:] {
		dbs, _ := filepath.Glob(filepath.Join(dir, "*.db"))
		if len(dbs) == 0 {
			panic("no store in " + dir)
		}
		db, err := sql.Open("sqlite", "file:"+dbs[0]+"?mode=ro")
		if err != nil {
			panic(err)
		}
		rows, err := db.Query(`SELECT trained_version, teacher_response_ids FROM samples WHERE trained_version IS NOT NULL AND length(teacher_response_ids) > 0 ORDER BY trained_version, created_at`)
		if err != nil {
			panic(err)
		}
		type count struct{ n, liked, evades int }
		per := map[int64]*count{}
		for rows.Next() {
			var v int64
			var b []byte
			if err := rows.Scan(&v, &b); err != nil {
				panic(err)
			}
			ids := make([]int32, len(b)/4)
			for i := range ids {
				ids[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
			}
			text := tok.Decode(ids)
			finished := strings.HasSuffix(text, "<|im_end|>") || strings.HasSuffix(text, "<|endoftext|>")
			text = strings.TrimSuffix(strings.TrimSuffix(text, "<|im_end|>"), "<|endoftext|>")
			c := per[v]
			if c == nil {
				c = &count{}
				per[v] = c
			}
			c.n++
			liked, ev := p.Satisfied(bench.Answer{Text: text, Finished: finished}), bench.Evades(text)
			if liked {
				c.liked++
			}
			if ev {
				c.evades++
			}
			if verbose {
				fmt.Printf("  v%d liked=%v evades=%v %q\n", v, liked, ev, text)
			}
		}
		db.Close()
		var vs []int64
		for v := range per {
			vs = append(vs, v)
		}
		slices.Sort(vs)
		all := count{}
		fmt.Printf("%s (%s):", dir, p.Name)
		for _, v := range vs {
			c := per[v]
			fmt.Printf(" v%d %d/%d liked %d evade;", v, c.liked, c.n, c.evades)
			all.n += c.n
			all.liked += c.liked
			all.evades += c.evades
		}
		fmt.Printf(" all %d/%d liked, %d evade\n", all.liked, all.n, all.evades)
	}
}
