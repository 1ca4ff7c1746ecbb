package quant

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/clawrl/clawrl/gguf"
)

// This file is the scalar side of every block format: how a block's bytes
// become float32 values (package gguf's reference, llama.cpp's
// dequantize_row_*), and a plain quantizer per format that makes valid
// blocks for tests and benchmark files. The quantizers pick scales by min/max, not by llama.cpp's
// error-minimising search: their blocks decode the same way, they are only
// a little less accurate.

func f16at(b []byte, off int) float32 { return F16ToF32(binary.LittleEndian.Uint16(b[off:])) }

// DequantizeRow widens the blocks in src (len(dst)/BlockSize blocks of t)
// into dst, with gguf's reference dequantization (the one implementation of
// each block format's decoding; the kernels here are checked against it).
func DequantizeRow(t Type, dst []float32, src []byte) {
	bs, bb := t.BlockSize(), t.BlockBytes()
	n := len(dst) / bs
	if len(src) < n*bb {
		panic(fmt.Sprintf("quant: %v dequantize of %d values needs %d bytes, have %d", t, len(dst), n*bb, len(src)))
	}
	if err := gguf.Dequantize(gguf.Type(t), src[:n*bb], dst[:n*bs]); err != nil {
		panic(fmt.Sprintf("quant: %v: %v", t, err))
	}
}

// scaleMinK4 unpacks the 6-bit scale and min of sub-block j of a Q4_K or
// Q5_K super-block from its 12 packed bytes.
func scaleMinK4(j int, q []byte) (sc, m uint8) {
	if j < 4 {
		return q[j] & 63, q[j+4] & 63
	}
	return q[j+4]&0xf | (q[j-4]>>6)<<4, q[j+4]>>4 | (q[j]>>6)<<4
}

// QuantizeRow quantizes src (a whole number of blocks of t) into dst.
func QuantizeRow(t Type, dst []byte, src []float32) {
	bs, bb := t.BlockSize(), t.BlockBytes()
	n := len(src) / bs
	if len(src)%bs != 0 || len(dst) < n*bb {
		panic(fmt.Sprintf("quant: %v quantize of %d values into %d bytes", t, len(src), len(dst)))
	}
	f := quantBlock[t]
	for i := 0; i < n; i++ {
		f(dst[i*bb:(i+1)*bb], src[i*bs:(i+1)*bs])
	}
}

var quantBlock = map[Type]func(b []byte, x []float32){
	Q4_0: func(b []byte, x []float32) { quantSym(b, x, 4) },
	Q5_0: func(b []byte, x []float32) { quantSym(b, x, 5) },
	Q4_1: func(b []byte, x []float32) { quantAsym(b, x, 4) },
	Q5_1: func(b []byte, x []float32) { quantAsym(b, x, 5) },
	Q8_0: quantQ8_0, Q4_K: func(b []byte, x []float32) { quantK(b, x, false) },
	Q5_K: func(b []byte, x []float32) { quantK(b, x, true) }, Q6_K: quantQ6K,
}

func putF16(b []byte, off int, f float32) { binary.LittleEndian.PutUint16(b[off:], F32ToF16(f)) }

func clampInt(v, lo, hi int) int { return min(max(v, lo), hi) }

// packNibbles stores 32 values of up to 5 bits: low 4 bits as nibbles in
// qs (value j low, value j+16 high), the fifth bits in qh when set.
func packNibbles(qs []byte, q *[32]int, qh *uint32) {
	for j := 0; j < 16; j++ {
		qs[j] = byte(q[j]&15) | byte(q[j+16]&15)<<4
		if qh != nil {
			*qh |= uint32(q[j]>>4&1) << j
			*qh |= uint32(q[j+16]>>4&1) << (j + 16)
		}
	}
}

// quantSym is llama.cpp's quantize_row_q4_0_ref / q5_0_ref: the value of
// largest magnitude maps to -2^(bits-1).
func quantSym(b []byte, x []float32, bits int) {
	var amax, mx float32
	for _, v := range x {
		if a := float32(math.Abs(float64(v))); a > amax {
			amax, mx = a, v
		}
	}
	half := 1 << (bits - 1)
	d := mx / -float32(half)
	var id float32
	if d != 0 {
		id = 1 / d
	}
	var q [32]int
	for j, v := range x {
		q[j] = clampInt(int(v*id+float32(half)+0.5), 0, 2*half-1)
	}
	putF16(b, 0, d)
	if bits == 4 {
		packNibbles(b[2:18], &q, nil)
		return
	}
	var qh uint32
	packNibbles(b[6:22], &q, &qh)
	binary.LittleEndian.PutUint32(b[2:], qh)
}

// quantAsym is quantize_row_q4_1_ref / q5_1_ref: [min, max] onto 0..2^bits-1.
func quantAsym(b []byte, x []float32, bits int) {
	lo, hi := x[0], x[0]
	for _, v := range x {
		lo, hi = min(lo, v), max(hi, v)
	}
	levels := float32(int(1)<<bits - 1)
	d := (hi - lo) / levels
	var id float32
	if d != 0 {
		id = 1 / d
	}
	var q [32]int
	for j, v := range x {
		q[j] = clampInt(int((v-lo)*id+0.5), 0, int(levels))
	}
	putF16(b, 0, d)
	putF16(b, 2, lo)
	if bits == 4 {
		packNibbles(b[4:20], &q, nil)
		return
	}
	var qh uint32
	packNibbles(b[8:24], &q, &qh)
	binary.LittleEndian.PutUint32(b[4:], qh)
}

func quantQ8_0(b []byte, x []float32) {
	var amax float32
	for _, v := range x {
		amax = max(amax, float32(math.Abs(float64(v))))
	}
	d := amax / 127
	var id float32
	if d != 0 {
		id = 1 / d
	}
	putF16(b, 0, d)
	for j, v := range x {
		b[2+j] = byte(int8(math.RoundToEven(float64(v * id))))
	}
}

// quantK makes a Q4_K (or Q5_K) block: per sub-block of 32 a scale and a
// minimum over [min(0, lo), hi], both stored as 6-bit multiples of the
// super-block's d and dmin.
func quantK(b []byte, x []float32, five bool) {
	levels := float32(15)
	if five {
		levels = 31
	}
	var scale, minv [8]float32
	var maxScale, maxMin float32
	for s := 0; s < 8; s++ {
		lo, hi := float32(0), x[32*s]
		for _, v := range x[32*s : 32*s+32] {
			lo, hi = min(lo, v), max(hi, v)
		}
		scale[s], minv[s] = (hi-lo)/levels, -lo
		maxScale, maxMin = max(maxScale, scale[s]), max(maxMin, minv[s])
	}
	d, dmin := maxScale/63, maxMin/63
	putF16(b, 0, d)
	putF16(b, 2, dmin)
	d, dmin = f16at(b, 0), f16at(b, 2)
	var ls, lm [8]uint8
	for s := 0; s < 8; s++ {
		if d > 0 {
			ls[s] = uint8(clampInt(int(math.Round(float64(scale[s]/d))), 0, 63))
		}
		if dmin > 0 {
			lm[s] = uint8(clampInt(int(math.Round(float64(minv[s]/dmin))), 0, 63))
		}
	}
	sc := b[4:16]
	for j := 0; j < 4; j++ {
		sc[j] = ls[j] | (ls[j+4]>>4)<<6
		sc[j+4] = lm[j] | (lm[j+4]>>4)<<6
		sc[j+8] = ls[j+4]&15 | (lm[j+4]&15)<<4
	}
	var L [256]int
	for s := 0; s < 8; s++ {
		ds, dm := d*float32(ls[s]), dmin*float32(lm[s])
		for l := 0; l < 32; l++ {
			if ds > 0 {
				L[32*s+l] = clampInt(int(math.Round(float64((x[32*s+l]+dm)/ds))), 0, int(levels))
			}
		}
	}
	qs := b[16:144]
	if five {
		qh := b[16:48]
		clear(qh)
		qs = b[48:176]
		for j := 0; j < 4; j++ {
			for l := 0; l < 32; l++ {
				lo, hi := L[64*j+l], L[64*j+32+l]
				qh[l] |= byte(lo>>4&1)<<(2*j) | byte(hi>>4&1)<<(2*j+1)
			}
		}
	}
	for j := 0; j < 4; j++ {
		for l := 0; l < 32; l++ {
			qs[32*j+l] = byte(L[64*j+l]&15) | byte(L[64*j+32+l]&15)<<4
		}
	}
}

// quantQ6K makes a Q6_K block: an int8 scale per 16 values times d.
func quantQ6K(b []byte, x []float32) {
	var scale [16]float32
	var maxAbs, maxScale float32
	for s := 0; s < 16; s++ {
		var amax, mx float32
		for _, v := range x[16*s : 16*s+16] {
			if a := float32(math.Abs(float64(v))); a > amax {
				amax, mx = a, v
			}
		}
		scale[s] = mx / -32
		if a := float32(math.Abs(float64(scale[s]))); a > maxAbs {
			maxAbs, maxScale = a, scale[s]
		}
	}
	d := maxScale / -128
	putF16(b, 208, d)
	d = f16at(b, 208)
	var L [256]int
	sc := b[192:208]
	for s := 0; s < 16; s++ {
		var is int
		if d != 0 {
			is = clampInt(int(math.Round(float64(scale[s]/d))), -128, 127)
		}
		sc[s] = byte(int8(is))
		ds := d * float32(is)
		for l := 0; l < 16; l++ {
			q := 32
			if ds != 0 {
				q = clampInt(int(math.Round(float64(x[16*s+l]/ds)))+32, 0, 63)
			}
			L[16*s+l] = q
		}
	}
	ql, qh := b[0:128], b[128:192]
	for n := 0; n < 2; n++ {
		for l := 0; l < 32; l++ {
			j := 128 * n
			q1, q2, q3, q4 := L[j+l], L[j+l+32], L[j+l+64], L[j+l+96]
			ql[64*n+l] = byte(q1&15) | byte(q3&15)<<4
			ql[64*n+l+32] = byte(q2&15) | byte(q4&15)<<4
			qh[32*n+l] = byte(q1>>4) | byte(q2>>4)<<2 | byte(q3>>4)<<4 | byte(q4>>4)<<6
		}
	}
}
