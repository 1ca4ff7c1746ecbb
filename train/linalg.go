package train

import (
	"runtime"
	"sync"

	"github.com/clawrl/clawrl/blas"
)

// The matrix products a linear layer's backward needs (its forward is
// model.Linear.Forward), all row-major float32, on package blas (pure Go,
// or OpenBLAS with -tags openblas).
//
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

// axpy: y += alpha·x
func axpy(alpha float32, x, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] += alpha * v
	}
}

func beta(accumulate bool) float32 {
	if accumulate {
		return 1
	}
	return 0
}

func matmulNN(out, a, b []float32, m, n, k int, accumulate bool) {
	blas.Sgemm(false, false, m, n, k, 1, a, k, b, n, beta(accumulate), out, n)
}

func matmulTN(out, a, b []float32, m, n, k int, accumulate bool) {
	blas.Sgemm(true, false, m, n, k, 1, a, m, b, n, beta(accumulate), out, n)
}
