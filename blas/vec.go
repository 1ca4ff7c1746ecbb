package blas

import "math"

// DotRows computes out[j] = x·row j of rows for j < len(out), where row j
// starts at rows[j*ld] and has len(x) elements: a serial matrix-vector
// product for callers that parallelise themselves (attention scores, one
// query against every cached key). Each element is summed in the same order
// as Sgemm sums it.
func DotRows(out, x, rows []float32, ld int) {
	k, n := len(x), len(out)
	if n == 0 {
		return
	}
	_ = rows[(n-1)*ld+k-1]
	k8 := k &^ 7
	if !useAVX2 || k8 == 0 {
		for j := range out {
			out[j] = dotLanes(x, rows[j*ld:j*ld+k])
		}
		return
	}
	var t [4]float32
	j := 0
	for ; j+4 <= n; j += 4 {
		kern1x4(k8, &x[0], &rows[j*ld], ld, &t)
		for q := 0; q < 4; q++ {
			out[j+q] = addTail(t[q], x, rows[(j+q)*ld:(j+q)*ld+k], k8)
		}
	}
	for ; j < n; j++ {
		out[j] = addTail(kern1x1(k8, &x[0], &rows[j*ld]), x, rows[j*ld:j*ld+k], k8)
	}
}

// DotRows4 is DotRows for four vectors against the same rows: for r < 4
// and j < n, out[r*ldo+j] = x_r·row j, where x_r = x[r*ldx : r*ldx+k] and
// row j starts at rows[j*ld]. It shares each row's loads across the four
// (the attention scores of four query rows against one head's keys), and
// every element comes out bitwise as DotRows computes it: the 4×3 kernel
// sums each element in the 1×4 one's order.
func DotRows4(out []float32, ldo int, x []float32, ldx, k, n int, rows []float32, ld int) {
	if n == 0 {
		return
	}
	k8 := k &^ 7
	if !useAVX2 || k8 == 0 {
		for r := range 4 {
			DotRows(out[r*ldo:r*ldo+n], x[r*ldx:r*ldx+k], rows, ld)
		}
		return
	}
	_ = rows[(n-1)*ld+k-1]
	_ = x[3*ldx+k-1]
	_ = out[3*ldo+n-1]
	var t [12]float32
	j := 0
	for ; j+3 <= n; j += 3 {
		kern4x3(k8, &x[0], ldx, &rows[j*ld], ld, &t)
		if k8 == k { // no tail (head_dim 64, 128): the sums as they are
			for r := range 4 {
				o := out[r*ldo+j : r*ldo+j+3 : r*ldo+j+3]
				o[0], o[1], o[2] = t[3*r], t[3*r+1], t[3*r+2]
			}
			continue
		}
		for r := range 4 {
			xr := x[r*ldx : r*ldx+k]
			for q := range 3 {
				out[r*ldo+j+q] = addTail(t[3*r+q], xr, rows[(j+q)*ld:(j+q)*ld+k], k8)
			}
		}
	}
	for ; j < n; j++ {
		for r := range 4 {
			out[r*ldo+j] = addTail(kern1x1(k8, &x[r*ldx], &rows[j*ld]), x[r*ldx:r*ldx+k], rows[j*ld:j*ld+k], k8)
		}
	}
}

// addTail adds x[p]·y[p] for p from start on to s, in order, as Sgemm's
// kernels finish an element.
func addTail(s float32, x, y []float32, start int) float32 {
	for p := start; p < len(x); p++ {
		s += float32(x[p] * y[p])
	}
	return s
}

// Axpy computes y += alpha·x (vectorised with fused multiply-adds where the
// CPU has them).
func Axpy(alpha float32, x, y []float32) {
	y = y[:len(x)]
	n8 := len(x) &^ 7
	if useAVX2 && n8 > 0 {
		axpy8(n8, alpha, &x[0], &y[0])
	} else {
		n8 = 0
	}
	for i := n8; i < len(x); i++ {
		y[i] += float32(alpha * x[i])
	}
}

// ExpShift replaces x[i] by exp(x[i] − shift) for the first n8 elements
// (n8 = len(x) rounded down to a multiple of 8) with vector code and
// returns how many it did and their sum; the caller does the rest with its
// scalar exp. Returns 0, 0 without AVX2. Arguments must be ≤ 0 after the
// shift (softmax); below −87.3 they are clamped there (exp ≈ 1e-38).
// Accurate to about one float32 ulp.
func ExpShift(x []float32, shift float32) (done int, sum float32) {
	n8 := len(x) &^ 7
	if !useAVX2 || n8 == 0 {
		return 0, 0
	}
	return n8, expShift8(n8, &x[0], shift)
}

// WeightedRows sets out = Σ_p w[p]·row p of rows, where row p starts at
// rows[p*ld] and has len(out) elements: attention's weighted sum of cached
// values. Each element is summed in p order (fused multiply-adds with AVX2),
// whatever len(out) is.
func WeightedRows(out, w, rows []float32, ld int) {
	n, k := len(w), len(out)
	if n == 0 {
		clear(out)
		return
	}
	_ = rows[(n-1)*ld+k-1]
	c := 0
	if useAVX2 {
		// Widest kernels first: more independent chains per pass.
		for ; c+64 <= k; c += 64 {
			wsum64(n, &w[0], &rows[c], ld, &out[c])
		}
		for ; c+32 <= k; c += 32 {
			wsum32(n, &w[0], &rows[c], ld, &out[c])
		}
		for ; c+16 <= k; c += 16 {
			wsum16(n, &w[0], &rows[c], ld, &out[c])
		}
		for ; c+8 <= k; c += 8 {
			wsum8(n, &w[0], &rows[c], ld, &out[c])
		}
	}
	for ; c < k; c++ {
		var s float32
		for p, wp := range w {
			s += float32(wp * rows[p*ld+c])
		}
		out[c] = s
	}
}

// WeightedRows4 is WeightedRows for four weight vectors against the same
// rows: for r < 4, out[r*ldo : r*ldo+k] = Σ_{p<n} w[r*ldw+p]·row p, where
// row p starts at rows[p*ld] (k columns). It
// shares each row's loads across the four (attention's tiles at head_dim
// 16, where one weight vector leaves the FMA units waiting on latency),
// and every element comes out bitwise as WeightedRows computes it.
func WeightedRows4(out []float32, ldo, k int, w []float32, ldw, n int, rows []float32, ld int) {
	if n == 0 {
		for r := range 4 {
			clear(out[r*ldo : r*ldo+k])
		}
		return
	}
	_ = out[3*ldo+k-1]
	_ = w[3*ldw+n-1]
	_ = rows[(n-1)*ld+k-1]
	c := 0
	if useAVX2 {
		for ; c+16 <= k; c += 16 {
			wsum16x4(n, &w[0], ldw, &rows[c], ld, &out[c], ldo)
		}
	}
	if c < k {
		for r := range 4 {
			WeightedRows(out[r*ldo+c:r*ldo+k], w[r*ldw:r*ldw+n], rows[c:], ld)
		}
	}
}

// SumExpShift returns Σ exp(x[i] − shift) over the first done elements
// (len(x) rounded down to a multiple of 8) without changing x, summed in
// float64 across blocks of 1024; the caller adds the rest with its scalar
// exp. Returns 0, 0 without AVX2. Same argument rules as ExpShift. For
// log-softmax over a vocabulary: 150k exponentials per token.
func SumExpShift(x []float32, shift float32) (done int, sum float64) {
	n8 := len(x) &^ 7
	if !useAVX2 || n8 == 0 {
		return 0, 0
	}
	const block = 1024
	for lo := 0; lo < n8; lo += block {
		sum += float64(sumExpShift8(min(block, n8-lo), &x[lo], shift))
	}
	return n8, sum
}

// Max returns the largest of m and the elements of x, skipping NaNs in x
// (as `if v > m { m = v }` does; a NaN m stays). The vector kernel takes 32
// elements at a time, the rest go through the scalar loop.
func Max(x []float32, m float32) float32 {
	j := 0
	if n32 := len(x) &^ 31; useAVX2 && n32 > 0 {
		m = max32(n32, &x[0], m)
		j = n32
	}
	for _, v := range x[j:] {
		if v > m {
			m = v
		}
	}
	return m
}

// Scale multiplies x by s in place (eight at a time with AVX2; the same
// products either way).
func Scale(x []float32, s float32) {
	j := 0
	if n8 := len(x) &^ 7; useAVX2 && n8 > 0 {
		scal8(n8, s, &x[0])
		j = n8
	}
	for ; j < len(x); j++ {
		x[j] *= s
	}
}

// SwiGLUBackward overwrites dgate and dup with SwiGLU's backward (act =
// silu(g)·up, dy = d(loss)/d(act)) for every element:
//
//	e = exp(−|g|), s = 1/(1+e) (g ≥ 0) or e·(1/(1+e)) (g < 0) = sigmoid(g)
//	dup = dy·(g·s), dgate = ((dy·up)·s)·(1 + g·(1−s))
//
// e comes from ExpShift's exponential (about one float32 ulp; its argument
// is never positive, so it cannot overflow). With AVX2 eight elements at a
// time, the same float32 operations as the scalar loop, so the same bits.
func SwiGLUBackward(dgate, dup, dout, gate, up []float32) {
	n := len(gate)
	dgate, dup, dout, up = dgate[:n], dup[:n], dout[:n], up[:n]
	i := 0
	if n8 := n &^ 7; useAVX2 && n8 > 0 {
		swigluBwd8(n8, &gate[0], &up[0], &dout[0], &dgate[0], &dup[0])
		i = n8
	}
	for ; i < n; i++ {
		g := gate[i]
		e := -float32(math.Abs(float64(g)))
		if useAVX2 {
			// The vector exponential for the tail too, so an element's
			// bits do not depend on where the array ends.
			var t [8]float32
			t[0] = e
			expShift8(8, &t[0], 0)
			e = t[0]
		} else {
			e = float32(math.Exp(float64(e)))
		}
		s := 1 / (1 + e)
		if g < 0 {
			s = e * s
		}
		dup[i] = dout[i] * (g * s)
		dgate[i] = dout[i] * up[i] * s * (1 + float32(g*(1-s)))
	}
}

// SwiGLU computes out = silu(gate)·up elementwise as
//
//	out[i] = g / (1 + float32(math.Exp(float64(−g)))) · up[i]
//
// bitwise (the serving forward's SwiGLU, whose logits llama.cpp's greedy
// ids and the behaviour logprobs are checked against): with AVX2 and FMA,
// eight at a time through math.Exp's own FMA-path operations in float64
// lanes; the rest, and any group with |g| ≥ 700 or a NaN (math.Exp's
// special cases), by the scalar loop.
func SwiGLU(out, gate, up []float32) {
	n := len(gate)
	out, up = out[:n], up[:n]
	i := 0
	if useAVX2 {
		n8 := n &^ 7
		for i < n8 {
			i += siluMul8(n8-i, &out[i], &gate[i], &up[i])
			if i < n8 {
				swigluScalar(out[i:i+8], gate[i:i+8], up[i:i+8])
				i += 8
			}
		}
	}
	swigluScalar(out[i:], gate[i:], up[i:])
}

func swigluScalar(out, gate, up []float32) {
	up = up[:len(gate)]
	out = out[:len(gate)]
	for i, g := range gate {
		out[i] = g / (1 + float32(math.Exp(float64(-g)))) * up[i]
	}
}
