package train

// sgemm, when set, is a BLAS-style single-precision GEMM used instead of the
// pure-Go loops: out = op(a)·op(b) (+ out when accumulate). It is a package
// level hook only because the BLAS binding is chosen at build time.
var sgemm func(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, accumulate bool, out []float32, ldo int)
