package loop

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/engine/native"
	"github.com/clawrl/clawrl/rl"
)

// BenchmarkServingWhileTraining measures serving on the native engine with
// the native trainer idle and then stepping in the background (yielding
// through the gate as serve does: rl.TrainerYield at every yield point of
// the step), in one run, and reports time to first
// token and decode rate for both and their ratio (target: p99 ≤ 1.5× idle).
// Requests come one at a time with a pause between them, like an agent's.
//
//	go test ./loop -run '^$' -bench ServingWhileTraining -benchtime 1x
func BenchmarkServingWhileTraining(b *testing.B) {
	modelDir := tinyModel(b)
	eng, err := native.Open(modelDir, native.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer eng.Close()
	gate := rl.NewGate()
	served := rl.GatedEngine{Engine: eng, Gate: gate}
	s := Settings{TrainMode: "lora", LoRARank: 16, LearningRate: 1e-4, WRL: 1, WOPD: 1, MicroTokens: 128}
	tr, err := s.nativeTrainer(eng.Model(), modelDir)
	if err != nil {
		b.Fatal(err)
	}
	// As the scheduler does: a trainer that can pause inside a step (the
	// native one: every few milliseconds) waits while serving runs.
	yields := false
	if y, ok := tr.(rl.Yielder); ok {
		yields = true
		y.SetYield(rl.TrainerYield(gate, 30*time.Second))
	}
	f := eng.Format()
	text, err := f.Render([]chat.Message{{Role: chat.RoleUser, Content: "Tell me a story about a lighthouse keeper."}}, nil, engine.RenderOptions{AddGenerationPrompt: true})
	if err != nil {
		b.Fatal(err)
	}
	prompt := f.Encode(text)
	batch := make([]rl.Sample, 16)
	for i := range batch {
		resp := make([]int32, 64)
		lp := make([]float32, 64)
		for j := range resp {
			resp[j], lp[j] = int32(1000+i*64+j), -2
		}
		batch[i] = rl.Sample{TurnID: "bench", PromptIDs: prompt, ResponseIDs: resp, BehaviourLogprobs: lp, UseRL: true, Reward: 1}
	}
	// Agents pause between requests (tool runs, the user reading); training
	// uses those pauses (rl.Gate.Quiet).
	const requests, thinkTime = 40, 400 * time.Millisecond
	measure := func() (ttft, rate []float64) {
		for range requests {
			start := time.Now()
			var first time.Duration
			n := 0
			_, err := served.Generate(context.Background(), engine.GenerateRequest{PromptIDs: prompt, MaxTokens: 32, Sampling: engine.Sampling{Temperature: 1}},
				func(engine.Token) error {
					if n == 0 {
						first = time.Since(start)
					}
					n++
					return nil
				})
			if err != nil {
				b.Fatal(err)
			}
			total := time.Since(start)
			ttft = append(ttft, first.Seconds()*1000)
			if n > 1 {
				rate = append(rate, float64(n-1)/(total-first).Seconds())
			}
			time.Sleep(thinkTime) // the agent runs a tool or the user reads
		}
		return ttft, rate
	}
	for b.Loop() {
		idleTTFT, idleRate := measure()

		ctx, cancel := context.WithCancel(context.Background())
		var steps atomic.Int32
		done := make(chan struct{})
		go func() {
			defer close(done)
			for ctx.Err() == nil {
				if _, err := gate.WaitIdle(ctx, 30*time.Second); err != nil {
					return
				}
				if _, err := tr.Step(ctx, batch); err != nil && ctx.Err() == nil {
					b.Error(err)
					return
				}
				steps.Add(1)
			}
		}()
		trainTTFT, trainRate := measure()
		cancel()
		<-done

		p := func(xs []float64, q float64) float64 {
			s := slices.Clone(xs)
			slices.Sort(s)
			return s[min(len(s)-1, int(q*float64(len(s))))]
		}
		b.ReportMetric(p(idleTTFT, 0.5), "idle-ttft-p50-ms")
		b.ReportMetric(p(idleTTFT, 0.99), "idle-ttft-p99-ms")
		b.ReportMetric(p(trainTTFT, 0.5), "train-ttft-p50-ms")
		b.ReportMetric(p(trainTTFT, 0.99), "train-ttft-p99-ms")
		b.ReportMetric(p(trainTTFT, 0.99)/p(idleTTFT, 0.99), "p99-ratio")
		b.ReportMetric(p(idleRate, 0.5), "idle-tok/s")
		b.ReportMetric(p(trainRate, 0.5), "train-tok/s")
		b.ReportMetric(float64(steps.Load()), "steps")
		if yields {
			b.ReportMetric(1, "trainer-yields")
		}
	}
}
