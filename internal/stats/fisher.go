// Package stats holds the small statistics the loop and the benchmarks
// share.
package stats

import "math"

// FisherGreater is the one-sided p-value of Fisher's exact test that a
// successes of n is a greater share than b of m: the chance, with the
// margins fixed, of the first group's successes being at least a if both
// came from one rate (1 when either group is empty). The other side, that
// a of n is the smaller share, is FisherGreater(b, m, a, n).
func FisherGreater(a, n, b, m int) float64 {
	if n == 0 || m == 0 {
		return 1
	}
	total, k := n+m, a+b
	p := 0.0
	for x := a; x <= min(n, k); x++ {
		if k-x > m {
			continue
		}
		p += math.Exp(logC(n, x) + logC(m, k-x) - logC(total, k))
	}
	return min(p, 1)
}

// SignTest is the two-sided sign test's p-value for ahead pairs against
// behind ones (ties left out): the chance of a split at least this uneven
// if either side of a pair were as likely to come out ahead.
func SignTest(ahead, behind int) float64 {
	n, k := ahead+behind, min(ahead, behind)
	if n == 0 {
		return 1
	}
	var tail float64
	for i := 0; i <= k; i++ {
		tail += math.Exp(logC(n, i) - float64(n)*math.Ln2)
	}
	return min(1, 2*tail)
}

// logC is the log of the binomial coefficient C(n, k).
func logC(n, k int) float64 {
	l1, _ := math.Lgamma(float64(n + 1))
	l2, _ := math.Lgamma(float64(k + 1))
	l3, _ := math.Lgamma(float64(n - k + 1))
	return l1 - l2 - l3
}
