package train

import (
	"runtime"
	"sync"
)

// The three matrix products a linear layer's forward and backward need, all
// row-major float32. They are split over goroutines by output rows; each
// goroutine owns its rows, so no locking and a deterministic result.
//
//	matmulNT: out[M,N] (+)= a[M,K] · b[N,K]ᵀ   forward  y = x Wᵀ
//	matmulNN: out[M,N] (+)= a[M,K] · b[K,N]    backward dx = dy W
//	matmulTN: out[M,N] (+)= a[K,M]ᵀ · b[K,N]   backward dW = dyᵀ x

// parallelRows calls fn on disjoint row ranges of [0,n), using at most
// GOMAXPROCS goroutines, and only when the work is big enough to pay.
func parallelRows(n int, work int, fn func(lo, hi int)) {
	p := runtime.GOMAXPROCS(0)
	if p > n {
		p = n
	}
	if p <= 1 || work < 1<<15 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	chunk := (n + p - 1) / p
	for lo := 0; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(lo, hi)
		}()
	}
	wg.Wait()
}

func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// axpy: y += alpha·x
func axpy(alpha float32, x, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] += alpha * v
	}
}

func matmulNT(out, a, b []float32, m, n, k int, accumulate bool) {
	if sgemm != nil {
		sgemm(false, true, m, n, k, a, k, b, k, accumulate, out, n)
		return
	}
	parallelRows(m, m*n*k, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			ai := a[i*k : i*k+k]
			oi := out[i*n : i*n+n]
			for j := range n {
				d := dot(ai, b[j*k:j*k+k])
				if accumulate {
					oi[j] += d
				} else {
					oi[j] = d
				}
			}
		}
	})
}

func matmulNN(out, a, b []float32, m, n, k int, accumulate bool) {
	if sgemm != nil {
		sgemm(false, false, m, n, k, a, k, b, n, accumulate, out, n)
		return
	}
	parallelRows(m, m*n*k, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			oi := out[i*n : i*n+n]
			if !accumulate {
				clear(oi)
			}
			for p := range k {
				if v := a[i*k+p]; v != 0 {
					axpy(v, b[p*n:p*n+n], oi)
				}
			}
		}
	})
}

func matmulTN(out, a, b []float32, m, n, k int, accumulate bool) {
	if sgemm != nil {
		sgemm(true, false, m, n, k, a, m, b, n, accumulate, out, n)
		return
	}
	parallelRows(m, m*n*k, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			oi := out[i*n : i*n+n]
			if !accumulate {
				clear(oi)
			}
			for p := range k {
				if v := a[p*m+i]; v != 0 {
					axpy(v, b[p*n:p*n+n], oi)
				}
			}
		}
	})
}
