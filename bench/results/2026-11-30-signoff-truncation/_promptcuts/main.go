// Promptcuts: greedy answers to recent rated prompts, cut at 64 tokens, per version.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/engine/native"
)

type row struct {
	Trained int
	Score   int
	Seq     int
	Prompt  []int32
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
	stop := eng.Format().StopIDs()
	gen := func(prompt []int32, v int) (int, bool) {
		ad := "v" + strconv.Itoa(v)
		if v == 0 {
			ad = engine.AdapterBase
		}
		n := 0
		g, err := eng.Generate(ctx, engine.GenerateRequest{PromptIDs: prompt, MaxTokens: 64, Adapter: ad}, func(t engine.Token) error {
			for _, s := range stop {
				if t.ID == s {
					return engine.ErrStop
				}
			}
			n++
			return nil
		})
		if err != nil {
			panic(err)
		}
		return n, g.FinishReason == engine.FinishLength
	}
	// step k: the 16 latest rated turns trained at or before k, answered by v(k-1) and v(k)
	for k := 1; k <= nv; k++ {
		var ps [][]int32
		for i := len(rows) - 1; i >= 0 && len(ps) < 16; i-- {
			if rows[i].Trained > 0 && rows[i].Trained <= k {
				ps = append(ps, rows[i].Prompt)
			}
		}
		for _, v := range []int{k - 1, k} {
			cut, tok := 0, 0
			var mu sync.Mutex
			var wg sync.WaitGroup
			for _, p := range ps {
				wg.Add(1)
				go func() {
					defer wg.Done()
					n, c := gen(p, v)
					mu.Lock()
					tok += n
					if c {
						cut++
					}
					mu.Unlock()
				}()
			}
			wg.Wait()
			fmt.Printf("step %d v%d: %d prompts, %d cut, mean %.1f tokens\n", k, v, len(ps), cut, float64(tok)/float64(len(ps)))
		}
	}
}
