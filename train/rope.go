package train

import "math"

// Rotary position embedding, transformers' rotate_half convention: the first
// and second halves of each head are the two coordinates of each rotated pair.

// ropeTables holds cos and sin for positions [0, maxPos) × headDim/2, computed
// the way transformers does (float32 inverse frequencies, float32 angles).
type ropeTables struct {
	half     int
	inv      []float32
	cos, sin []float32
}

func newRopeTables(a Arch) *ropeTables {
	half := a.HeadDim / 2
	t := &ropeTables{half: half, inv: make([]float32, half)}
	for i := range t.inv {
		if a.InvFreq != nil {
			t.inv[i] = float32(a.InvFreq[i])
		} else {
			t.inv[i] = float32(1 / math.Pow(a.RopeTheta, float64(float32(2*i)/float32(a.HeadDim))))
		}
	}
	return t
}

// grow extends the tables to cover positions [0, maxPos).
func (t *ropeTables) grow(maxPos int) {
	if len(t.cos) >= maxPos*t.half {
		return
	}
	inv := t.inv
	t.cos = make([]float32, maxPos*t.half)
	t.sin = make([]float32, maxPos*t.half)
	for p := range maxPos {
		for i, f := range inv {
			a := float32(p) * f
			t.cos[p*t.half+i] = float32(math.Cos(float64(a)))
			t.sin[p*t.half+i] = float32(math.Sin(float64(a)))
		}
	}
}

// ropeForward rotates every head of every token: x is [T, heads·headDim],
// pos[t] the token's position in its own sequence.
func ropeForward(out, inp []float32, pos []int32, heads int, t *ropeTables) {
	h2 := t.half
	hd := 2 * h2
	for tok, p := range pos {
		c := t.cos[int(p)*h2 : int(p)*h2+h2]
		s := t.sin[int(p)*h2 : int(p)*h2+h2]
		for h := range heads {
			base := (tok*heads + h) * hd
			x := inp[base : base+hd]
			o := out[base : base+hd]
			for i := range h2 {
				x1, x2 := x[i], x[i+h2]
				o[i] = x1*c[i] - x2*s[i]
				o[i+h2] = x2*c[i] + x1*s[i]
			}
		}
	}
}

// ropeBackward is the transposed rotation; it overwrites dinp.
func ropeBackward(dinp, dout []float32, pos []int32, heads int, t *ropeTables) {
	h2 := t.half
	hd := 2 * h2
	for tok, p := range pos {
		c := t.cos[int(p)*h2 : int(p)*h2+h2]
		s := t.sin[int(p)*h2 : int(p)*h2+h2]
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
