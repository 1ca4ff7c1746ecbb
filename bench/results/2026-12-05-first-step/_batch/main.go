// Command _batch prints what each version of a kept run was trained on:
// per sample, the version, why, and the first words of the answer trained
// on (the teacher's, or the policy's own for an RL sample):
//
//	go run ./bench/results/2026-12-05-first-step/_batch GGUF DATA [VERSIONS...]
package main

import (
	"database/sql"
	"encoding/binary"
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
	f, err := gguf.Open(os.Args[1])
	if err != nil {
		panic(err)
	}
	tok, err := tokenizer.FromGGUF(f.Header)
	if err != nil {
		panic(err)
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(os.Args[2], "clawrl.db")+"?mode=ro")
	if err != nil {
		panic(err)
	}
	where := ""
	if len(os.Args) > 3 {
		where = " WHERE s.trained_version IN (" + strings.Join(os.Args[3:], ",") + ")"
	}
	rows, err := db.Query(`SELECT s.trained_version, s.reward, s.use_rl, s.teacher_response_ids, p.response_ids, COALESCE(t.feedback_text, '')
		FROM samples s JOIN turns t ON t.id = s.turn_id JOIN turn_payloads p ON p.turn_seq = t.seq` + where + ` ORDER BY s.trained_version, t.seq`)
	if err != nil {
		panic(err)
	}
	for rows.Next() {
		var v sql.NullInt64
		var r float64
		var rl bool
		var teacher, own []byte
		var fb string
		if err := rows.Scan(&v, &r, &rl, &teacher, &own, &fb); err != nil {
			panic(err)
		}
		who, text := "own", tok.Decode(ids(own))
		if teacher != nil {
			who, text = "teacher", tok.Decode(ids(teacher))
		}
		text = strings.ReplaceAll(text, "\n", "⏎")
		if len(text) > 110 {
			text = text[:110]
		}
		fmt.Printf("v%d %-7s r=%+.0f rl=%v %q | %.60s\n", v.Int64, who, r, rl, text, fb)
	}
}
