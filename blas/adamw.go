package blas

import "math"

// AdamWParams are one AdamW step's scalars, in float32 as the update
// applies them: Decay = 1 − lr·λ, Beta1, Beta2, BC2Sqrt = √(1−β2ᵗ), Eps,
// Step = lr/(1−β1ᵗ).
type AdamWParams struct {
	Decay, Beta1, Beta2, BC2Sqrt, Eps, Step float32
}

// AdamW applies one AdamW step (torch.optim.AdamW's single-tensor
// arithmetic, decoupled weight decay) to parameters p with gradients g and
// moments m, v, all the same length:
//
//	x = p·Decay
//	m = β1·m + (1−β1)·g
//	v = β2·v + (1−β2)·g·g
//	p = x − Step·(m / (√v/BC2Sqrt + Eps))
//
// in float32, each operation rounded in that order; the AVX2 kernel does
// the same operations eight at a time (correctly rounded square root and
// division), so every element gets the same bits either way.
func AdamW(p, g, m, v []float32, c AdamWParams) {
	n := len(p)
	g, m, v = g[:n], m[:n], v[:n]
	b1, b2 := c.Beta1, c.Beta2
	omb1, omb2 := 1-b1, 1-b2
	j := 0
	if n8 := n &^ 7; useAVX2 && n8 > 0 {
		k := [8]float32{c.Decay, b1, omb1, b2, omb2, c.BC2Sqrt, c.Eps, c.Step}
		adamw8(n8, &p[0], &g[0], &m[0], &v[0], &k)
		j = n8
	}
	for ; j < n; j++ {
		gj := g[j]
		x := p[j] * c.Decay
		// The conversions keep the compiler from fusing a product into
		// the next addition (it may with GOAMD64=v3): every operation
		// rounds, as in the kernel.
		m[j] = float32(b1*m[j]) + float32(omb1*gj)
		v[j] = float32(b2*v[j]) + float32(float32(omb2*gj)*gj)
		denom := float32(math.Sqrt(float64(v[j])))/c.BC2Sqrt + c.Eps
		p[j] = x - float32(c.Step*(m[j]/denom))
	}
}
