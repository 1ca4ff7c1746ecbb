// gap reads the teacher-written samples of a kept bench store's first step
// (trained_version 1: the student was the base model) and prints, per
// answer, the teacher − student gap log π_teacher − log π_base of each
// token (the teacher's under the hint, as stored; the student's without it,
// read here by the base weights), and what share of the step's weight the
// opening token, and each answer's largest-gap token, get when the gap is
// clipped at ±1, at ±4 and not at all.
//
//	go run ./bench/results/2026-11-29-repeat/_gap MODEL.gguf STORE_DIR [VERSION]
package main

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"strconv"

	_ "modernc.org/sqlite"

	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/engine/native"
)

func int32s(b []byte) []int32 {
	out := make([]int32, len(b)/4)
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func float32s(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func main() {
	eng, err := native.Open(os.Args[1], native.Options{})
	if err != nil {
		panic(err)
	}
	defer eng.Close()
	version := int64(1)
	if len(os.Args) > 3 {
		version, _ = strconv.ParseInt(os.Args[3], 10, 64)
	}
	db, err := sql.Open("sqlite", "file:"+os.Args[2]+"/clawrl.db?mode=ro")
	if err != nil {
		panic(err)
	}
	rows, err := db.Query(`SELECT p.prompt_ids, s.teacher_response_ids, s.teacher_logprobs FROM samples s JOIN turns t ON t.id = s.turn_id
		JOIN turn_payloads p ON p.turn_seq = t.seq WHERE s.trained_version = ? AND length(s.teacher_response_ids) > 0 ORDER BY t.seq`, version)
	if err != nil {
		panic(err)
	}
	f := eng.Format()
	ctx := context.Background()
	clips := []float64{1, 4, 0}
	first := make([]float64, len(clips))
	top := make([]float64, len(clips))
	total := make([]float64, len(clips))
	for rows.Next() {
		var pb, rb, lb []byte
		if err := rows.Scan(&pb, &rb, &lb); err != nil {
			panic(err)
		}
		prompt, resp, tlp := int32s(pb), int32s(rb), float32s(lb)
		s, err := eng.Score(ctx, engine.ScoreRequest{PromptIDs: prompt, CompletionIDs: resp, Adapter: engine.AdapterBase})
		if err != nil {
			panic(err)
		}
		fmt.Printf("%q\n ", f.Decode(resp))
		at := 0
		for i := range resp {
			if tlp[i]-s.Logprobs[i] > tlp[at]-s.Logprobs[at] {
				at = i
			}
		}
		for i := range resp {
			g := float64(tlp[i] - s.Logprobs[i])
			if i < 8 {
				fmt.Printf(" %q %+.1f", f.Decode(resp[i:i+1]), g)
			}
			for c, clip := range clips {
				w := g
				if clip > 0 {
					w = max(-clip, min(clip, g))
				}
				if i == 0 {
					first[c] += w
				}
				if i == at {
					top[c] += w
				}
				total[c] += math.Abs(w)
			}
		}
		fmt.Printf("  | largest: %q %+.1f at token %d of %d\n", f.Decode(resp[at:at+1]), tlp[at]-s.Logprobs[at], at, len(resp))
	}
	for c, clip := range clips {
		fmt.Printf("clip %g: opening tokens carry %.1f%% of the step's |weight|, each answer's largest-gap token %.1f%%\n", clip, 100*first[c]/total[c], 100*top[c]/total[c])
	}
}
