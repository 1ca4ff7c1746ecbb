package train

import "github.com/clawrl/clawrl/model"

// RoPE's backward. The forward is model.RopeTable.Apply (transformers'
// rotate_half convention: the first and second halves of each head are the
// two coordinates of each rotated pair), with one table row per token of the
// micro-batch; the backward rotates gradients by the same angles, the other
// way.

// ropeBackward is the transposed rotation; it overwrites dinp. Token t uses
// row t of rt.
func ropeBackward(dinp, dout []float32, tokens, heads int, rt model.RopeTable) {
	h2 := rt.Half
	hd := 2 * h2
	for tok := range tokens {
		c := rt.Cos[tok*h2 : tok*h2+h2]
		s := rt.Sin[tok*h2 : tok*h2+h2]
		for h := range heads {
			base := (tok*heads + h) * hd
			d := dout[base : base+hd]
			o := dinp[base : base+hd]
			for i := range h2 {
				d1, d2 := d[i], d[i+h2]
				o[i] = d1*c[i] + d2*s[i]
				o[i+h2] = d2*c[i] - d1*s[i]
			}
		}
	}
}
