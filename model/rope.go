package model

import "math"

// ropeTable holds cos and sin of each row's rotary angles, [rows, head_dim/2],
// computed once per forward call and shared by every layer.
type ropeTable struct {
	half     int
	cos, sin []float32
}

// newRopeTable computes the angles pos·inv_freq in float32, as transformers
// does (the float32 rounding of the angle matters at long positions), then
// cos and sin.
func newRopeTable(invFreq []float32, pos []int) ropeTable {
	half := len(invFreq)
	rt := ropeTable{half: half, cos: make([]float32, len(pos)*half), sin: make([]float32, len(pos)*half)}
	for r, p := range pos {
		for i, f := range invFreq {
			angle := float32(p) * f
			rt.cos[r*half+i] = float32(math.Cos(float64(angle)))
			rt.sin[r*half+i] = float32(math.Sin(float64(angle)))
		}
	}
	return rt
}

// ropeForward rotates each head of each row of x ([rows, nHeads, headDim]) in
// place, in Hugging Face's rotate_half layout: dimension i pairs with
// i + headDim/2 (not with i+1 as in the original paper).
func ropeForward(x []float32, rt ropeTable, rows, nHeads int) {
	half := rt.half
	hd := 2 * half
	for r := 0; r < rows; r++ {
		c := rt.cos[r*half : (r+1)*half]
		s := rt.sin[r*half : (r+1)*half]
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
