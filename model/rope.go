package model

import "math"

// RopeTable holds cos and sin of each row's rotary angles, [rows, head_dim/2],
// computed once per forward call and shared by every layer (and by the
// trainer's backward, which rotates gradients by the same angles).
type RopeTable struct {
	Half     int
	Cos, Sin []float32
}

// NewRopeTable computes the angles pos·inv_freq in float32, as transformers
// does (the float32 rounding of the angle matters at long positions), then
// cos and sin.
func NewRopeTable(invFreq []float32, pos []int) RopeTable {
	half := len(invFreq)
	rt := RopeTable{Half: half, Cos: make([]float32, len(pos)*half), Sin: make([]float32, len(pos)*half)}
	for r, p := range pos {
		for i, f := range invFreq {
			angle := float32(p) * f
			rt.Cos[r*half+i] = float32(math.Cos(float64(angle)))
			rt.Sin[r*half+i] = float32(math.Sin(float64(angle)))
		}
	}
	return rt
}

// Apply rotates each head of each row of x ([rows, nHeads, headDim]) in
// place, in Hugging Face's rotate_half layout: dimension i pairs with
// i + headDim/2 (not with i+1 as in the original paper). Row r uses the
// table's row r. Every product is rounded before the add, so the result does
// not depend on whether the compiler fuses multiply-adds (GOAMD64=v3).
func (rt RopeTable) Apply(x []float32, rows, nHeads int) {
	half := rt.Half
	hd := 2 * half
	for r := 0; r < rows; r++ {
		c := rt.Cos[r*half : (r+1)*half]
		s := rt.Sin[r*half : (r+1)*half]
		for h := 0; h < nHeads; h++ {
			v := x[(r*nHeads+h)*hd : (r*nHeads+h+1)*hd]
			lo, hi := v[:half], v[half:hd]
			for i := range half {
				a, b := lo[i], hi[i]
				lo[i] = float32(a*c[i]) - float32(b*s[i])
				hi[i] = float32(b*c[i]) + float32(a*s[i])
			}
		}
	}
}
