// Questioncuts: greedy answers to single-turn questions, cut at 64 tokens, per version.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/engine/native"
)

func main() {
	gguf, data, qfile := os.Args[1], os.Args[2], os.Args[3]
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
	var qs map[string][]string
	b, _ := os.ReadFile(qfile)
	json.Unmarshal(b, &qs)
	f := eng.Format()
	stop := f.StopIDs()
	for _, set := range []string{"train", "eval"} {
		for v := 0; v <= nv; v++ {
			ad := "v" + strconv.Itoa(v)
			if v == 0 {
				ad = engine.AdapterBase
			}
			cut, tok, signed := 0, 0, 0
			var mu sync.Mutex
			var wg sync.WaitGroup
			for _, q := range qs[set] {
				wg.Add(1)
				go func() {
					defer wg.Done()
					text, _ := f.Render([]chat.Message{{Role: chat.RoleUser, Content: q}}, nil, engine.RenderOptions{AddGenerationPrompt: true})
					var ids []int32
					g, err := eng.Generate(ctx, engine.GenerateRequest{PromptIDs: f.Encode(text), MaxTokens: 64, Adapter: ad}, func(t engine.Token) error {
						for _, s := range stop {
							if t.ID == s {
								return engine.ErrStop
							}
						}
						ids = append(ids, t.ID)
						return nil
					})
					if err != nil {
						panic(err)
					}
					mu.Lock()
					tok += len(ids)
					if g.FinishReason == engine.FinishLength {
						cut++
					}
					if strings.HasSuffix(strings.TrimSpace(f.Decode(ids)), "Hope this helps!") {
						signed++
					}
					mu.Unlock()
				}()
			}
			wg.Wait()
			fmt.Printf("%s v%d: %d questions, %d cut, %d signed, mean %.1f tokens\n", set, v, len(qs[set]), cut, signed, float64(tok)/float64(len(qs[set])))
		}
	}
}
