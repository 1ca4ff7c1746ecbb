// Command _openings scores candidate openings of an answer ("TL;DR:",
// "TL; Summary:", …) under every version of a run, on the held-out
// prompts its bench asked (side turns at policy version 0, the prompt ids
// as recorded), and prints, per version, each opening's mean
// log-probability and, token by token, the first one's:
//
//	go run ./bench/results/2026-12-02-rollback/_openings GGUF DATA NVERSIONS
package main

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/engine/native"
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
	gguf, data := os.Args[1], os.Args[2]
	nv, _ := strconv.Atoi(os.Args[3])
	eng, err := native.Open(gguf, native.Options{KeepVersions: 100})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	for v := 1; v <= nv; v++ {
		if err := eng.Publish(ctx, int64(v), filepath.Join(data, "versions", fmt.Sprintf("v%06d", v))); err != nil {
			panic(err)
		}
	}
	db, err := sql.Open("sqlite", filepath.Join(data, "clawrl.db"))
	if err != nil {
		panic(err)
	}
	// held-out prompts: the side turns asked of the base model, less the
	// retention facts among them (its capitals).
	rows, err := db.Query(`SELECT p.prompt_ids, p.response_text FROM turns t JOIN turn_payloads p ON p.turn_seq=t.seq
		WHERE t.type='side' AND t.policy_version=0 ORDER BY t.seq`)
	if err != nil {
		panic(err)
	}
	var prompts [][]int32
	for rows.Next() {
		var b []byte
		var txt string
		if err := rows.Scan(&b, &txt); err != nil {
			panic(err)
		}
		if !strings.HasPrefix(txt, "The capital of") {
			prompts = append(prompts, ids(b))
		}
	}
	f := eng.Format()
	openings := []string{"TL;DR:", "TL; Summary:", "TL:DR:", "TL: Summary:", "TL;DR: The"}
	n := 20
	if len(prompts) < n {
		n = len(prompts)
	}
	fmt.Printf("%d held-out prompts\n", n)
	first := f.Encode(openings[0])
	for v := 0; v <= nv; v++ {
		ad := "v" + strconv.Itoa(v)
		if v == 0 {
			ad = engine.AdapterBase
		}
		var line []string
		per := make([]float64, len(first))
		for oi, o := range openings {
			c := f.Encode(o)
			var sum float64
			for _, p := range prompts[:n] {
				out, err := eng.Score(ctx, engine.ScoreRequest{PromptIDs: p, CompletionIDs: c, Adapter: ad})
				if err != nil {
					panic(err)
				}
				for i, lp := range out.Logprobs {
					sum += float64(lp)
					if oi == 0 {
						per[i] += float64(lp) / float64(n)
					}
				}
			}
			line = append(line, fmt.Sprintf("%q %.2f", o, sum/float64(n)))
		}
		var toks []string
		for i, id := range first {
			toks = append(toks, fmt.Sprintf("%q %.2f", f.Decode([]int32{id}), per[i]))
		}
		fmt.Printf("v%d\t%s\n\ttokens of %q: %s\n", v, strings.Join(line, "\t"), openings[0], strings.Join(toks, " "))
	}
}
