package loop

import (
	"context"
	"fmt"
	"regexp"
	"sync"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/rl"
)

// Fact is a retention question and the words that make an answer correct.
type Fact struct {
	Question string
	Accept   []string
}

// DefaultFacts is the promotion gate's retention set: simple facts a small
// instruct model (SmolLM2-135M-Instruct) answers right at temperature 0.
// Only the facts the served base model gets right are checked.
var DefaultFacts = []Fact{
	{"What is the capital of France?", []string{"Paris"}},
	{"What is the capital of Japan?", []string{"Tokyo"}},
	{"What is the capital of Germany?", []string{"Berlin"}},
	{"What is the capital of Italy?", []string{"Rome"}},
	{"What is the capital of Egypt?", []string{"Cairo"}},
	{"What is the capital of Russia?", []string{"Moscow"}},
	{"What is 2 plus 2?", []string{"4", "four"}},
	{"How many days are in a week?", []string{"7", "seven"}},
	{"What color is the sky on a clear day?", []string{"blue"}},
	{"Who wrote Romeo and Juliet?", []string{"Shakespeare"}},
	{"What is the opposite of hot?", []string{"cold"}},
	{"What is the largest ocean on Earth?", []string{"Pacific"}},
	{"What language is spoken in Spain?", []string{"Spanish"}},
	{"What is the chemical symbol for water?", []string{"H2O"}},
	{"What planet do we live on?", []string{"Earth"}},
	{"How many legs does a spider have?", []string{"8", "eight"}},
}

// retentionAnswerTokens bounds the base model's answer to a fact.
const retentionAnswerTokens = 40

// RetentionProbes asks eng's base weights each fact at temperature 0 and
// keeps, for those it answers right, the answer up to the first accepted
// word: the prompt, the prefix before the word, and the word's tokens.
func RetentionProbes(ctx context.Context, eng engine.Engine, facts []Fact) ([]rl.Probe, error) {
	f := eng.Format()
	probes := make([]*rl.Probe, len(facts))
	errs := make([]error, len(facts))
	var wg sync.WaitGroup
	for i, fact := range facts {
		wg.Add(1)
		go func() { // the engine batches concurrent generations
			defer wg.Done()
			probes[i], errs[i] = probe(ctx, eng, f, fact)
		}()
	}
	wg.Wait()
	var out []rl.Probe
	for i := range facts {
		if errs[i] != nil {
			return nil, errs[i]
		}
		if probes[i] != nil {
			out = append(out, *probes[i])
		}
	}
	return out, nil
}

func probe(ctx context.Context, eng engine.Engine, f engine.Format, fact Fact) (*rl.Probe, error) {
	text, err := f.Render([]chat.Message{{Role: chat.RoleUser, Content: fact.Question}}, nil, engine.RenderOptions{AddGenerationPrompt: true})
	if err != nil {
		return nil, fmt.Errorf("retention fact %q: %w", fact.Question, err)
	}
	prompt := f.Encode(text)
	stop := f.StopIDs()
	var ids []int32
	_, err = eng.Generate(ctx, engine.GenerateRequest{PromptIDs: prompt, MaxTokens: retentionAnswerTokens, Adapter: engine.AdapterBase},
		func(t engine.Token) error {
			for _, s := range stop {
				if t.ID == s {
					return engine.ErrStop
				}
			}
			ids = append(ids, t.ID)
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("retention fact %q: %w", fact.Question, err)
	}
	answer := f.Decode(ids)
	start, end := -1, -1
	for _, a := range fact.Accept {
		re := regexp.MustCompile(`(?i)(^|[^\pL\pN])(` + regexp.QuoteMeta(a) + `)($|[^\pL\pN])`)
		if m := re.FindStringSubmatchIndex(answer); m != nil && (start < 0 || m[4] < start) {
			start, end = m[4], m[5]
		}
	}
	if start < 0 {
		return nil, nil // the base model does not know it: nothing to keep
	}
	// The tokens that cover the word: from the one whose text runs past the
	// word's start to the one that reaches its end.
	first, last := -1, -1
	for i := range ids {
		n := len(f.Decode(ids[:i+1]))
		if first < 0 && n > start {
			first = i
		}
		if n >= end {
			last = i
			break
		}
	}
	if first < 0 || last < first {
		return nil, nil
	}
	return &rl.Probe{Name: fact.Question, PromptIDs: prompt, PrefixIDs: ids[:first], AnswerIDs: ids[first : last+1]}, nil
}
