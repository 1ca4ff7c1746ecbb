package rl

import (
	"math"
	"testing"
)

func TestTokenAdvantages(t *testing.T) {
	old := []float32{-1, -2, -0.5}
	teacher := []float32{-0.5, -2.5, -0.5}
	cases := []struct {
		name    string
		cfg     AdvantageConfig
		reward  float64
		teacher []float32
		want    []float32
		wantErr bool
	}{
		{"rl broadcasts reward", AdvantageConfig{Method: MethodRL}, -1, teacher, []float32{-1, -1, -1}, false},
		{"opd is teacher minus old", AdvantageConfig{Method: MethodOPD}, 1, teacher, []float32{0.5, -0.5, 0}, false},
		{"opd without teacher fails", AdvantageConfig{Method: MethodOPD}, 1, nil, nil, true},
		{"combine weighs both", AdvantageConfig{Method: MethodCombine, WOPD: 2, WRL: 0.5}, 1, teacher, []float32{1.5, -0.5, 0.5}, false},
		{"combine without hint is rl only", AdvantageConfig{Method: MethodCombine, WOPD: 2, WRL: 0.5}, -1, nil, []float32{-0.5, -0.5, -0.5}, false},
		{"combine with zero reward is opd only", DefaultAdvantage(), 0, teacher, []float32{0.5, -0.5, 0}, false},
		{"unknown method", AdvantageConfig{Method: "x"}, 1, teacher, nil, true},
		{"length mismatch", DefaultAdvantage(), 1, teacher[:2], nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.cfg.TokenAdvantages(c.reward, c.teacher, old)
			if (err != nil) != c.wantErr {
				t.Fatalf("err = %v, want error %v", err, c.wantErr)
			}
			for i := range c.want {
				if math.Abs(float64(got[i]-c.want[i])) > 1e-6 {
					t.Fatalf("got %v, want %v", got, c.want)
				}
			}
		})
	}
}

func TestGroupNormalize(t *testing.T) {
	got, err := GroupNormalize([]float64{1, -1, 1, 1, 5, 0.3}, []int{1, 1, 1, 1, 0, 2})
	if err != nil {
		t.Fatal(err)
	}
	// Group 1: mean 0.5, unbiased std 1.
	want := []float64{0.5 / (1 + 1e-6), -1.5 / (1 + 1e-6), 0.5 / (1 + 1e-6), 0.5 / (1 + 1e-6), 5, 0}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-9 {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	if _, err := GroupNormalize([]float64{1}, nil); err == nil {
		t.Fatal("want a length mismatch error")
	}
}

// TestTokenLossGradients checks d(loss)/d(logp) against central differences
// over every branch: clipped below/above, unclipped, IS weight truncated or
// not, both KL estimators, entropy bonus, SFT.
func TestTokenLossGradients(t *testing.T) {
	in := TokenInputs{
		Advantages:        []float32{1, -1, 0.5, -2, 1, 0},
		OldLogprobs:       []float32{-1, -1, -2, -0.5, -3, -1},
		BehaviourLogprobs: []float32{-1.5, -0.2, -2, -0.5, -4, -1},
		RefLogprobs:       []float32{-1.2, -0.8, -2.2, -0.4, -2.5, -1.1},
	}
	// ρ = exp(logp − old): 1.05, 0.7 (clipped below, A<0 wins clipped), 1.1,
	// 1.4 (A<0: unclipped), 2 (A>0: clipped above), 1.
	logp := []float32{-1 + 0.0488, -1 - 0.3567, -2 + 0.0953, -0.5 + 0.3365, -3 + 0.6931, -1}
	entropy := []float32{1, 2, 0.5, 3, 1, 0.1}
	cfgs := map[string]LossConfig{
		"ppo":        DefaultLoss(),
		"ppo-k3-ent": {Kind: LossPPO, ClipLow: 0.2, ClipHigh: 0.28, KLCoef: 0.1, KLEstimator: KLK3, EntropyCoef: 0.01, ISCap: 2},
		"ppo-k1":     {Kind: LossPPO, ClipLow: 0.2, ClipHigh: 0.28, KLCoef: 0.3, KLEstimator: KLK1, ISCap: 1.5},
		"sft":        {Kind: LossSFT},
	}
	for name, cfg := range cfgs {
		t.Run(name, func(t *testing.T) {
			if err := cfg.Validate(in, len(logp)); err != nil {
				t.Fatal(err)
			}
			n := len(logp)
			dl, de := make([]float32, n), make([]float32, n)
			_, st := cfg.TokenLoss(in, logp, entropy, dl, de)
			if cfg.Kind == LossPPO && (st.Clipped == 0 || st.ISTruncated == 0) {
				t.Fatalf("test inputs should hit clipping and truncation: %+v", st)
			}
			for i := range n {
				const h = 1e-3
				f := func(x float32) float64 {
					lp := append([]float32(nil), logp...)
					lp[i] = x
					l, _ := cfg.TokenLoss(in, lp, entropy, make([]float32, n), make([]float32, n))
					return l
				}
				num := (f(logp[i]+h) - f(logp[i]-h)) / (2 * h)
				if math.Abs(num-float64(dl[i])) > 2e-3*math.Max(1, math.Abs(num)) {
					t.Errorf("token %d: dlogp %.6g, numeric %.6g", i, dl[i], num)
				}
				if want := float32(-cfg.EntropyCoef); de[i] != want && cfg.Kind == LossPPO {
					t.Errorf("token %d: dentropy %g, want %g", i, de[i], want)
				}
			}
		})
	}
}

func TestLossValidate(t *testing.T) {
	ok := TokenInputs{Advantages: []float32{1}, OldLogprobs: []float32{-1}}
	cases := []struct {
		name string
		cfg  LossConfig
		in   TokenInputs
		bad  bool
	}{
		{"ok", DefaultLoss(), ok, false},
		{"missing old", DefaultLoss(), TokenInputs{Advantages: []float32{1}}, true},
		{"kl needs ref", LossConfig{Kind: LossPPO, KLCoef: 0.1, KLEstimator: KLK3}, ok, true},
		{"bad behaviour length", DefaultLoss(), TokenInputs{Advantages: []float32{1}, OldLogprobs: []float32{-1}, BehaviourLogprobs: []float32{}}, true},
		{"unknown kind", LossConfig{Kind: "dpo"}, ok, true},
		{"sft needs nothing", LossConfig{Kind: LossSFT}, TokenInputs{}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := c.cfg.Validate(c.in, 1); (err != nil) != c.bad {
				t.Fatalf("err = %v, want error %v", err, c.bad)
			}
		})
	}
}

func TestBatchBaseline(t *testing.T) {
	rewards := []float64{1, -1, -1, -1, 0.5}
	use := []bool{true, true, true, true, false} // the last is OPD-only or grouped
	if got := BatchBaseline(BaselineNone, rewards, use); got[0] != 1 || got[1] != -1 {
		t.Errorf("none changed rewards: %v", got)
	}
	c := BatchBaseline(BaselineCenter, rewards, use)
	if c[0] != 1.5 || c[1] != -0.5 || c[4] != 0.5 {
		t.Errorf("center: %v, want mean -0.5 subtracted from the first four", c)
	}
	b := BatchBaseline(BaselineBatch, rewards, use)
	// torch: t = tensor([1.,-1,-1,-1]); (t - t.mean())/(t.std()+1e-6)
	want := []float64{1.5, -0.5, -0.5, -0.5}
	for i := range want {
		want[i] /= 1.0 + 1e-6
		if math.Abs(b[i]-want[i]) > 1e-9 {
			t.Errorf("batch[%d] = %v, want %v", i, b[i], want[i])
		}
	}
	if b[4] != 0.5 {
		t.Errorf("a sample outside the baseline changed: %v", b[4])
	}
	if got := BatchBaseline(BaselineBatch, []float64{-1, 1}, []bool{true, false}); got[0] != -1 {
		t.Errorf("a lone reward was normalised: %v", got)
	}
	if _, err := ParseBaseline("median"); err == nil {
		t.Error("unknown baseline accepted")
	}
}

func TestOPDClip(t *testing.T) {
	c := AdvantageConfig{Method: MethodCombine, WOPD: 1, WRL: 1, OPDClip: 1}
	a, err := c.TokenAdvantages(0.5, []float32{-0.1, -5, -2}, []float32{-3, -1, -2.5})
	if err != nil {
		t.Fatal(err)
	}
	// gaps 2.9 → 1, −4 → −1, 0.5 stays; plus the reward 0.5.
	for i, want := range []float32{1.5, -0.5, 1} {
		if math.Abs(float64(a[i]-want)) > 1e-6 {
			t.Errorf("advantage %d = %v, want %v", i, a[i], want)
		}
	}
}
