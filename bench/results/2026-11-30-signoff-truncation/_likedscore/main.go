// Likedscore: do liked answers lose likelihood at the steps that drift?
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/engine/native"
)

type row struct {
	Turn     string
	Trained  int
	Score    int
	Seq      int
	Prompt   []int32
	Response []int32
	Teacher  []int32
	RL       int
}

func main() {
	gguf, data, jsonl := os.Args[1], os.Args[2], os.Args[3]
	nv, _ := strconv.Atoi(os.Args[4])
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
	f, _ := os.Open(jsonl)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	var rows []row
	for sc.Scan() {
		var r row
		json.Unmarshal(sc.Bytes(), &r)
		rows = append(rows, r)
	}
	score := func(r row, ids []int32, v int) (float64, int) {
		ad := "v" + strconv.Itoa(v)
		if v == 0 {
			ad = engine.AdapterBase
		}
		out, err := eng.Score(ctx, engine.ScoreRequest{PromptIDs: r.Prompt, CompletionIDs: ids, Adapter: ad})
		if err != nil {
			panic(err)
		}
		var s float64
		for _, lp := range out.Logprobs {
			s += float64(lp)
		}
		return s, len(ids)
	}
	// per row, per version: mean logprob of the liked response (score 1) or the teacher answer (score -1)
	for _, r := range rows {
		ids := r.Response
		kind := "like"
		if r.Score < 0 {
			if r.Teacher == nil {
				continue
			}
			ids, kind = r.Teacher, "teach"
		}
		fmt.Printf("%s\t%d\t%d\t%d", kind, r.Seq, r.Trained, len(ids))
		for v := 0; v <= nv; v++ {
			s, n := score(r, ids, v)
			fmt.Printf("\t%.3f", s/float64(n))
		}
		fmt.Println()
	}
}
