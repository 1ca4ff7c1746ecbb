package api

import (
	"testing"

	"github.com/clawrl/clawrl/engine"
)

func TestWithDefaultSampling(t *testing.T) {
	model := &engine.Sampling{Temperature: 0.6, TopP: 0.95, TopK: 20}
	for _, tc := range []struct {
		name string
		body string
		info engine.Info
		want engine.Sampling
	}{
		{"model defaults", `{"messages":[{"role":"user","content":"hi"}]}`, engine.Info{DefaultSampling: model}, engine.Sampling{Temperature: 0.6, TopP: 0.95, TopK: 20}},
		{"fallback", `{"messages":[{"role":"user","content":"hi"}]}`, engine.Info{}, engine.Sampling{Temperature: engine.DefaultTemperature, TopP: engine.DefaultTopP}},
		{"client temperature", `{"messages":[{"role":"user","content":"hi"}],"temperature":0}`, engine.Info{DefaultSampling: model}, engine.Sampling{Temperature: 0, TopP: 0.95, TopK: 20}},
		{"client both", `{"messages":[{"role":"user","content":"hi"}],"temperature":1.2,"top_p":0.5}`, engine.Info{DefaultSampling: model}, engine.Sampling{Temperature: 1.2, TopP: 0.5, TopK: 20}},
		{"greedy model", `{"messages":[{"role":"user","content":"hi"}]}`, engine.Info{DefaultSampling: &engine.Sampling{}}, engine.Sampling{}},
	} {
		req, apiErr := decodeChatRequest([]byte(tc.body))
		if apiErr != nil {
			t.Fatalf("%s: %v", tc.name, apiErr)
		}
		got := withDefaultSampling(req, tc.info)
		got.Seed = nil
		if got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
