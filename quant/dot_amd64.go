//go:build !purego

package quant

import (
	"os"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// Which assembly runs: AVX2 (+FMA, F16C) kernels on every x86-64 CPU since
// 2013–2015, their VPDPBUSD form where AVX-512 VNNI (with VL) is present.
var (
	hasAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpu.X86.HasF16C
	// hasVNNI: the EVEX form, an AVX-512 instruction set, so
	// CLAWRL_AVX512=0 turns it off too (the same bits).
	hasVNNI = hasAVX2 && cpu.X86.HasAVX512VNNI && cpu.X86.HasAVX512VL && os.Getenv("CLAWRL_AVX512") != "0"
	// hasAVXVNNI: its VEX form on the sixteen YMM registers (Intel's client
	// CPUs from Alder Lake, which have no AVX-512), for the Q4_K and Q6_K
	// packed kernels where hasVNNI is not (packedkv_gen.go);
	// CLAWRL_AVXVNNI=0 keeps AVX2 (the same bits).
	hasAVXVNNI = hasAVX2 && cpu.X86.HasAVXVNNI && os.Getenv("CLAWRL_AVXVNNI") != "0"
	// hasAVX512: the float32-activation kernels' 16-row forms (byte
	// shuffles and shifts on Z registers need BW). CLAWRL_AVX512=0 runs
	// the AVX2 forms instead, as it does in blas (the same bits).
	hasAVX512 = hasAVX2 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VL && os.Getenv("CLAWRL_AVX512") != "0"
)

//go:noescape
func dotQ4_1VNNI(nb int, w *byte, qs *int8, ds *float32) float32

//go:noescape
func dotQ4_1AVX2(nb int, w *byte, qs *int8, ds *float32) float32

//go:noescape
func dotQ8_0VNNI(nb int, w *byte, qs *int8, ds *float32) float32

//go:noescape
func dotQ8_0AVX2(nb int, w *byte, qs *int8, ds *float32) float32

//go:noescape
func dotQ4KAVX2(nb int, w *byte, qs *int8, ds *float32, bsums *int16) float32

//go:noescape
func dotQ6KAVX2(nb int, w *byte, qs *int8, ds *float32) float32

//go:noescape
func dotQ4_1x4VNNI(nb int, w *byte, qs *int8, ds *float32, ldq, ldd int, out *[4]float32)

//go:noescape
func dotQ4_1x4AVX2(nb int, w *byte, qs *int8, ds *float32, ldq, ldd int, out *[4]float32)

//go:noescape
func dotQ8_0x4VNNI(nb int, w *byte, qs *int8, ds *float32, ldq, ldd int, out *[4]float32)

//go:noescape
func dotQ8_0x4AVX2(nb int, w *byte, qs *int8, ds *float32, ldq, ldd int, out *[4]float32)

type asmDot4 func(nb int, w *byte, qs *int8, ds *float32, ldq, ldd int, out *[4]float32)

// wrap4 adapts a four-token kernel: a holds at least t0+4 rows.
func wrap4(k asmDot4) dot4Func {
	return func(w []byte, a *Act, t0 int, out *[4]float32) {
		nb := a.Cols / QK
		k(nb, unsafe.SliceData(w), &a.qs[t0*a.Cols], &a.ds[t0*2*nb], a.Cols, 2*nb*4, out)
	}
}

// fastDots4 are the four-token kernels by weight type.
func fastDots4(vnni, avx2 bool) map[Type]dot4Func {
	switch {
	case vnni:
		return map[Type]dot4Func{Q4_1: wrap4(dotQ4_1x4VNNI), Q8_0: wrap4(dotQ8_0x4VNNI)}
	case avx2:
		return map[Type]dot4Func{Q4_1: wrap4(dotQ4_1x4AVX2), Q8_0: wrap4(dotQ8_0x4AVX2)}
	}
	return map[Type]dot4Func{}
}

type asmDot func(nb int, w *byte, qs *int8, ds *float32) float32

// wrap adapts an assembly kernel to the dot signature.
func wrap(k asmDot) func(w []byte, a actRow) float32 {
	return func(w []byte, a actRow) float32 {
		nb := len(a.qs) / QK
		return k(nb, unsafe.SliceData(w), unsafe.SliceData(a.qs), unsafe.SliceData(a.ds))
	}
}

// fastDots are the kernels the matmul uses on this CPU, by weight type;
// a type missing here runs its reference.
func fastDots(vnni, avx2 bool) map[Type]func(w []byte, a actRow) float32 {
	m := map[Type]func(w []byte, a actRow) float32{}
	if avx2 {
		m[Q4_K] = func(w []byte, a actRow) float32 {
			return dotQ4KAVX2(len(a.qs)/QKK, unsafe.SliceData(w), unsafe.SliceData(a.qs), unsafe.SliceData(a.ds), unsafe.SliceData(a.bsums))
		}
		m[Q6_K] = func(w []byte, a actRow) float32 {
			return dotQ6KAVX2(len(a.qs)/QKK, unsafe.SliceData(w), unsafe.SliceData(a.qs), unsafe.SliceData(a.ds))
		}
	}
	switch {
	case vnni:
		m[Q4_1], m[Q8_0] = wrap(dotQ4_1VNNI), wrap(dotQ8_0VNNI)
	case avx2:
		m[Q4_1], m[Q8_0] = wrap(dotQ4_1AVX2), wrap(dotQ8_0AVX2)
	}
	return m
}

//go:noescape
func quantizeQ8AVX2(nb int, x *float32, qs *int8, ds *float32, isums *int32)

// quantizeQ8Fast runs the assembly quantizer where the CPU has AVX2 and
// reports whether it did.
func quantizeQ8Fast(qs []int8, ds []float32, isums []int32, x []float32) bool {
	if !hasAVX2 || len(x) < QK {
		return false
	}
	nb := len(x) / QK
	_, _, _ = qs[nb*QK-1], ds[2*nb-1], isums[nb-1]
	quantizeQ8AVX2(nb, &x[0], &qs[0], &ds[0], &isums[0])
	return true
}

//go:noescape
func quantizeQ8KAVX512(nb int, x *float32, qs *int8, d *float32, bsums *int16)

// quantizeQ8KFast runs the assembly Q8_K quantizer where the CPU has
// AVX-512 and reports whether it did.
func quantizeQ8KFast(qs []int8, ds []float32, bsums []int16, x []float32) bool {
	nb := len(ds)
	if !hasAVX512 || nb == 0 {
		return false
	}
	_, _, _ = qs[nb*QKK-1], bsums[16*nb-1], x[nb*QKK-1]
	quantizeQ8KAVX512(nb, &x[0], &qs[0], &ds[0], &bsums[0])
	return true
}

//go:noescape
func gemvQ4_1x8VNNI(nb int, w *byte, qs *int8, ds *float32, sums *int32, out *float32)

//go:noescape
func gemvQ4_1x8AVX2(nb int, w *byte, qs *int8, ds *float32, sums *int32, out *float32)

//go:noescape
func gemvQ8_0x8VNNI(nb int, w *byte, qs *int8, ds *float32, sums *int32, out *float32)

//go:noescape
func gemvQ8_0x8AVX2(nb int, w *byte, qs *int8, ds *float32, sums *int32, out *float32)

//go:noescape
func gemvQ4_0x8VNNI(nb int, w *byte, qs *int8, ds *float32, sums *int32, out *float32)

//go:noescape
func gemvQ4_0x8AVX2(nb int, w *byte, qs *int8, ds *float32, sums *int32, out *float32)

//go:noescape
func gemvQ5_0x8VNNI(nb int, w *byte, qs *int8, ds *float32, sums *int32, out *float32)

//go:noescape
func gemvQ5_0x8AVX2(nb int, w *byte, qs *int8, ds *float32, sums *int32, out *float32)

//go:noescape
func gemvQ5_1x8VNNI(nb int, w *byte, qs *int8, ds *float32, sums *int32, out *float32)

//go:noescape
func gemvQ5_1x8AVX2(nb int, w *byte, qs *int8, ds *float32, sums *int32, out *float32)

//go:noescape
func gemvQ4Kx8VNNI(nb int, w *byte, qs *int8, ds *float32, sums *int32, out *float32)

//go:noescape
func gemvQ4Kx8AVX2(nb int, w *byte, qs *int8, ds *float32, sums *int32, out *float32)

//go:noescape
func gemvQ5Kx8VNNI(nb int, w *byte, qs *int8, ds *float32, sums *int32, out *float32)

//go:noescape
func gemvQ5Kx8AVX2(nb int, w *byte, qs *int8, ds *float32, sums *int32, out *float32)

//go:noescape
func gemvQ6Kx8VNNI(nb int, w *byte, qs *int8, ds *float32, sums *int32, out *float32)

//go:noescape
func gemvQ6Kx8AVX2(nb int, w *byte, qs *int8, ds *float32, sums *int32, out *float32)

//go:noescape
func gemvQ4Kx8AVXVNNI(nb int, w *byte, qs *int8, ds *float32, sums *int32, out *float32)

//go:noescape
func gemvQ6Kx8AVXVNNI(nb int, w *byte, qs *int8, ds *float32, sums *int32, out *float32)

//go:noescape
func gemvQ4Kx8x2AVXVNNI(nb int, w *byte, qs *int8, ldq int, ds *float32, ldd int, sums *int32, lds int, out *float32, ldo int)

//go:noescape
func gemvQ6Kx8x2AVXVNNI(nb int, w *byte, qs *int8, ldq int, ds *float32, ldd int, sums *int32, lds int, out *float32, ldo int)

// fastGemv8 are the packed eight-row kernels (packed.go) by weight type;
// with avxvnni (and not vnni) Q4_K and Q6_K on AVX-VNNI.
func fastGemv8(vnni, avxvnni, avx2 bool) map[Type]gemv8Func {
	switch {
	case vnni:
		return map[Type]gemv8Func{Q4_0: gemvQ4_0x8VNNI, Q4_1: gemvQ4_1x8VNNI, Q5_0: gemvQ5_0x8VNNI, Q5_1: gemvQ5_1x8VNNI, Q8_0: gemvQ8_0x8VNNI, Q4_K: gemvQ4Kx8VNNI, Q5_K: gemvQ5Kx8VNNI, Q6_K: gemvQ6Kx8VNNI}
	case avx2:
		// Q4_K: the generated form (packedkv_amd64.s, int16 sums), the
		// macro one's bits in fewer instructions; the macro form is the
		// tests' oracle.
		m := map[Type]gemv8Func{Q4_0: gemvQ4_0x8AVX2, Q4_1: gemvQ4_1x8AVX2, Q5_0: gemvQ5_0x8AVX2, Q5_1: gemvQ5_1x8AVX2, Q8_0: gemvQ8_0x8AVX2, Q4_K: gemvQ4Kx8AVX2W, Q5_K: gemvQ5Kx8AVX2, Q6_K: gemvQ6Kx8AVX2}
		if avxvnni {
			m[Q4_K], m[Q6_K] = gemvQ4Kx8AVXVNNI, gemvQ6Kx8AVXVNNI
		}
		return m
	}
	return map[Type]gemv8Func{}
}

//go:noescape
func gemvQ4Kx8x4VNNI(nb int, w *byte, qs *int8, ldq int, ds *float32, ldd int, sums *int32, lds int, out *float32, ldo int)

//go:noescape
func gemvQ6Kx8x4VNNI(nb int, w *byte, qs *int8, ldq int, ds *float32, ldd int, sums *int32, lds int, out *float32, ldo int)

//go:noescape
func gemvQ5_0x8x4VNNI(nb int, w *byte, qs *int8, ldq int, ds *float32, ldd int, sums *int32, lds int, out *float32, ldo int)

//go:noescape
func gemvQ8_0x8x2VNNI(nb int, w *byte, qs *int8, ldq int, ds *float32, ldd int, sums *int32, lds int, out *float32, ldo int)

// gemvQ8_0x8x4VNNI is the two-token Q8_0 kernel (packed8x4_amd64.s) on
// tokens 0–1, then 2–3: one token already takes eight accumulators (the
// one-token kernel's lane order), so four do not fit the registers; the
// second pass reads the group's blocks from L1.
func gemvQ8_0x8x4VNNI(nb int, w *byte, qs *int8, ldq int, ds *float32, ldd int, sums *int32, lds int, out *float32, ldo int) {
	gemvQ8_0x8x2VNNI(nb, w, qs, ldq, ds, ldd, sums, lds, out, ldo)
	gemvQ8_0x8x2VNNI(nb, w, (*int8)(unsafe.Add(unsafe.Pointer(qs), 2*ldq)), ldq,
		(*float32)(unsafe.Add(unsafe.Pointer(ds), 2*ldd)), ldd,
		(*int32)(unsafe.Add(unsafe.Pointer(sums), 2*lds)), lds,
		(*float32)(unsafe.Add(unsafe.Pointer(out), 2*ldo)), ldo)
}

//go:noescape
func gemvQ4Kx8x2VNNI(nb int, w *byte, qs *int8, ldq int, ds *float32, ldd int, sums *int32, lds int, out *float32, ldo int)

//go:noescape
func gemvQ6Kx8x2VNNI(nb int, w *byte, qs *int8, ldq int, ds *float32, ldd int, sums *int32, lds int, out *float32, ldo int)

// gemvQ4Kx8AVX2W is the one-token Q4_K kernel on AVX2 with int16 (word)
// sums (packedkv_gen.go's q4kAVX2): gemvQ4Kx8AVX2's bits.
//
//go:noescape
func gemvQ4Kx8AVX2W(nb int, w *byte, qs *int8, ds *float32, sums *int32, out *float32)

//go:noescape
func gemvQ4Kx8x2AVX2(nb int, w *byte, qs *int8, ldq int, ds *float32, ldd int, sums *int32, lds int, out *float32, ldo int)

//go:noescape
func gemvQ6Kx8x2AVX2(nb int, w *byte, qs *int8, ldq int, ds *float32, ldd int, sums *int32, lds int, out *float32, ldo int)

// fastGemv8x2 are the two-token packed int8 kernels (packedk2_amd64.s,
// packed8x4_amd64.s; packedkv_amd64.s on AVX-VNNI and on AVX2).
func fastGemv8x2(vnni, avxvnni, avx2 bool) map[Type]gemv8x4Func {
	switch {
	case vnni:
		return map[Type]gemv8x4Func{Q4_K: gemvQ4Kx8x2VNNI, Q6_K: gemvQ6Kx8x2VNNI, Q8_0: gemvQ8_0x8x2VNNI}
	case avxvnni:
		return map[Type]gemv8x4Func{Q4_K: gemvQ4Kx8x2AVXVNNI, Q6_K: gemvQ6Kx8x2AVXVNNI}
	case avx2:
		return map[Type]gemv8x4Func{Q4_K: gemvQ4Kx8x2AVX2, Q6_K: gemvQ6Kx8x2AVX2}
	}
	return map[Type]gemv8x4Func{}
}

// fastGemv8x4 are the four-token packed int8 kernels (for prefill).
func fastGemv8x4(vnni bool) map[Type]gemv8x4Func {
	if !vnni {
		return map[Type]gemv8x4Func{}
	}
	return map[Type]gemv8x4Func{Q4_K: gemvQ4Kx8x4VNNI, Q6_K: gemvQ6Kx8x4VNNI, Q5_0: gemvQ5_0x8x4VNNI, Q8_0: gemvQ8_0x8x4VNNI}
}
