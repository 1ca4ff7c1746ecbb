package gguf

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Type is a ggml tensor type (ggml.h's enum ggml_type).
type Type uint32

// The ggml tensor types. Dequantize supports the ones with a block function
// below; the rest are known only by name and size, so a file holding them
// parses and the error names the tensor and its type.
const (
	F32     Type = 0
	F16     Type = 1
	Q4_0    Type = 2
	Q4_1    Type = 3
	Q5_0    Type = 6
	Q5_1    Type = 7
	Q8_0    Type = 8
	Q2_K    Type = 10
	Q3_K    Type = 11
	Q4_K    Type = 12
	Q5_K    Type = 13
	Q6_K    Type = 14
	Q8_K    Type = 15
	IQ2_XXS Type = 16
	IQ2_XS  Type = 17
	IQ3_XXS Type = 18
	IQ1_S   Type = 19
	IQ4_NL  Type = 20
	IQ3_S   Type = 21
	IQ2_S   Type = 22
	IQ4_XS  Type = 23
	I8      Type = 24
	I16     Type = 25
	I32     Type = 26
	I64     Type = 27
	F64     Type = 28
	IQ1_M   Type = 29
	BF16    Type = 30
	TQ1_0   Type = 34
	TQ2_0   Type = 35
	MXFP4   Type = 39
)

// QK_K is the super-block size of the k-quants.
const QK_K = 256

// TypeInfo describes a tensor type's blocks: BlockSize weights are stored in
// BlockBytes bytes.
type TypeInfo struct {
	Name       string
	BlockSize  int
	BlockBytes int
	// dequant turns one block into BlockSize floats; nil when unsupported.
	dequant func(dst []float32, block []byte)
}

var types = map[Type]TypeInfo{
	F32:     {"F32", 1, 4, dequantF32},
	F16:     {"F16", 1, 2, dequantF16},
	BF16:    {"BF16", 1, 2, dequantBF16},
	Q4_0:    {"Q4_0", 32, 18, dequantQ4_0},
	Q4_1:    {"Q4_1", 32, 20, dequantQ4_1},
	Q5_0:    {"Q5_0", 32, 22, dequantQ5_0},
	Q5_1:    {"Q5_1", 32, 24, dequantQ5_1},
	Q8_0:    {"Q8_0", 32, 34, dequantQ8_0},
	Q2_K:    {"Q2_K", QK_K, 84, dequantQ2_K},
	Q3_K:    {"Q3_K", QK_K, 110, dequantQ3_K},
	Q4_K:    {"Q4_K", QK_K, 144, dequantQ4_K},
	Q5_K:    {"Q5_K", QK_K, 176, dequantQ5_K},
	Q6_K:    {"Q6_K", QK_K, 210, dequantQ6_K},
	Q8_K:    {"Q8_K", QK_K, 292, nil},
	IQ2_XXS: {"IQ2_XXS", QK_K, 66, nil},
	IQ2_XS:  {"IQ2_XS", QK_K, 74, nil},
	IQ3_XXS: {"IQ3_XXS", QK_K, 98, nil},
	IQ1_S:   {"IQ1_S", QK_K, 50, nil},
	IQ4_NL:  {"IQ4_NL", 32, 18, nil},
	IQ3_S:   {"IQ3_S", QK_K, 110, nil},
	IQ2_S:   {"IQ2_S", QK_K, 82, nil},
	IQ4_XS:  {"IQ4_XS", QK_K, 136, nil},
	I8:      {"I8", 1, 1, nil},
	I16:     {"I16", 1, 2, nil},
	I32:     {"I32", 1, 4, nil},
	I64:     {"I64", 1, 8, nil},
	F64:     {"F64", 1, 8, nil},
	IQ1_M:   {"IQ1_M", QK_K, 56, nil},
	TQ1_0:   {"TQ1_0", QK_K, 54, nil},
	TQ2_0:   {"TQ2_0", QK_K, 66, nil},
	MXFP4:   {"MXFP4", 32, 17, nil},
}

func (t Type) info() (TypeInfo, bool) {
	i, ok := types[t]
	return i, ok
}

// Info returns the block layout of t; ok is false for an unknown type.
func (t Type) Info() (info TypeInfo, ok bool) { return t.info() }

// String is the type's ggml name ("Q4_K"), or "type N" when unknown.
func (t Type) String() string {
	if i, ok := types[t]; ok {
		return i.Name
	}
	return fmt.Sprintf("type %d", uint32(t))
}

// CanDequantize reports whether Dequantize supports t.
func (t Type) CanDequantize() bool {
	i, ok := types[t]
	return ok && i.dequant != nil
}

// RowBytes is the size of n weights of type t (n a multiple of the block
// size), or -1 when t is unknown or n is not a whole number of blocks.
func (t Type) RowBytes(n int) int {
	i, ok := types[t]
	if !ok || n < 0 || n%i.BlockSize != 0 {
		return -1
	}
	return n / i.BlockSize * i.BlockBytes
}

// Dequantize decodes len(dst) weights of type t from raw, which must hold
// exactly those weights' blocks. It is the scalar reference of each format
// (ggml-quants.c's dequantize_row_*), computed in the same order, so the
// results equal ggml's and the gguf Python package's bit for bit.
func Dequantize(t Type, raw []byte, dst []float32) error {
	info, ok := types[t]
	switch {
	case !ok:
		return fmt.Errorf("dequantize: ggml type %d is %w", uint32(t), ErrUnsupported)
	case info.dequant == nil:
		return fmt.Errorf("dequantize: type %s is %w", info.Name, ErrUnsupported)
	case len(dst)%info.BlockSize != 0:
		return fmt.Errorf("dequantize %s: %d weights are not whole blocks of %d", info.Name, len(dst), info.BlockSize)
	}
	nb := len(dst) / info.BlockSize
	if len(raw) != nb*info.BlockBytes {
		return fmt.Errorf("dequantize %s: %d weights need %d bytes, got %d", info.Name, len(dst), nb*info.BlockBytes, len(raw))
	}
	for b := range nb {
		info.dequant(dst[b*info.BlockSize:(b+1)*info.BlockSize], raw[b*info.BlockBytes:(b+1)*info.BlockBytes])
	}
	return nil
}

// HalfToFloat converts IEEE 754 binary16 bits to float32 exactly.
func HalfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // inf or NaN
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp != 0: // normal
		return math.Float32frombits(sign | (exp+112)<<23 | mant<<13)
	case mant == 0: // ±0
		return math.Float32frombits(sign)
	}
	// Subnormal: mant × 2⁻²⁴, exact in float32.
	f := float32(mant) * (1.0 / (1 << 24))
	if sign != 0 {
		f = -f
	}
	return f
}

func half(b []byte) float32 { return HalfToFloat(binary.LittleEndian.Uint16(b)) }

func dequantF32(dst []float32, b []byte) {
	dst[0] = math.Float32frombits(binary.LittleEndian.Uint32(b))
}

func dequantF16(dst []float32, b []byte) { dst[0] = half(b) }

func dequantBF16(dst []float32, b []byte) {
	dst[0] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(b)) << 16)
}

// The block formats below follow ggml-common.h's structs. The float32(…)
// around products keeps the compiler from fusing a multiply-add (Go may
// fuse on some targets), so the rounding matches ggml's reference.

// Q4_0: d (f16), 16 bytes of 4-bit values; w = d·(q − 8). The low nibbles
// are weights 0–15, the high nibbles 16–31.
func dequantQ4_0(dst []float32, b []byte) {
	d := half(b)
	qs := b[2:18]
	for j := range 16 {
		dst[j] = d * float32(int(qs[j]&0x0f)-8)
		dst[j+16] = d * float32(int(qs[j]>>4)-8)
	}
}

// Q4_1: d, m (f16), 16 bytes of 4-bit values; w = d·q + m.
func dequantQ4_1(dst []float32, b []byte) {
	d, m := half(b), half(b[2:])
	qs := b[4:20]
	for j := range 16 {
		dst[j] = float32(d*float32(qs[j]&0x0f)) + m
		dst[j+16] = float32(d*float32(qs[j]>>4)) + m
	}
}

// Q5_0: d (f16), 32 high bits (u32), 16 bytes of low nibbles;
// w = d·(q − 16).
func dequantQ5_0(dst []float32, b []byte) {
	d := half(b)
	qh := binary.LittleEndian.Uint32(b[2:])
	qs := b[6:22]
	for j := range 16 {
		h0 := byte(qh>>j) & 1
		h1 := byte(qh>>(j+16)) & 1
		dst[j] = d * float32(int(qs[j]&0x0f|h0<<4)-16)
		dst[j+16] = d * float32(int(qs[j]>>4|h1<<4)-16)
	}
}

// Q5_1: d, m (f16), 32 high bits, 16 bytes of low nibbles; w = d·q + m.
func dequantQ5_1(dst []float32, b []byte) {
	d, m := half(b), half(b[2:])
	qh := binary.LittleEndian.Uint32(b[4:])
	qs := b[8:24]
	for j := range 16 {
		h0 := byte(qh>>j) & 1
		h1 := byte(qh>>(j+16)) & 1
		dst[j] = float32(d*float32(qs[j]&0x0f|h0<<4)) + m
		dst[j+16] = float32(d*float32(qs[j]>>4|h1<<4)) + m
	}
}

// Q8_0: d (f16), 32 int8; w = d·q.
func dequantQ8_0(dst []float32, b []byte) {
	d := half(b)
	for j := range 32 {
		dst[j] = float32(int8(b[2+j])) * d
	}
}

// Q2_K: 16 scale bytes (4-bit scale, 4-bit min per 16 weights), 64 bytes of
// 2-bit values, d and dmin (f16); w = d·sc·q − dmin·m.
func dequantQ2_K(dst []float32, b []byte) {
	scales, qs := b[:16], b[16:80]
	d, dmin := half(b[80:]), half(b[82:])
	for i := range QK_K {
		half, shift, l := i/128, (i/32)%4, i%32
		q := (qs[half*32+l] >> (2 * shift)) & 3
		sc := scales[i/16]
		dl := d * float32(sc&0x0f)
		ml := dmin * float32(sc>>4)
		dst[i] = float32(dl*float32(q)) - ml
	}
}

// Q3_K: 32 bytes of high bits, 64 bytes of 2-bit low values, 12 bytes of
// 6-bit signed scales (one per 16 weights), d (f16); w = d·(sc − 32)·q with
// q in [−4, 3] (the high bit set means no −4 offset).
func dequantQ3_K(dst []float32, b []byte) {
	hmask, qs, sc12 := b[:32], b[32:96], b[96:108]
	d := half(b[108:])
	var scale [16]float32
	for k := range 16 {
		var low byte
		if k < 8 {
			low = sc12[k] & 0x0f
		} else {
			low = sc12[k-8] >> 4
		}
		high := (sc12[8+k%4] >> (2 * (k / 4))) & 3
		scale[k] = d * float32(int8(low|high<<4)-32)
	}
	for i := range QK_K {
		half, shift, l := i/128, (i/32)%4, i%32
		low := int8((qs[half*32+l] >> (2 * shift)) & 3)
		hbit := (hmask[l] >> (i / 32)) & 1
		q := low - int8((hbit^1)<<2)
		dst[i] = scale[i/16] * float32(q)
	}
}

// scaleMinK4 unpacks the j-th 6-bit scale and min of Q4_K and Q5_K
// (ggml's get_scale_min_k4).
func scaleMinK4(j int, q []byte) (sc, m byte) {
	if j < 4 {
		return q[j] & 63, q[j+4] & 63
	}
	return q[j+4]&0x0f | (q[j-4]>>6)<<4, q[j+4]>>4 | (q[j]>>6)<<4
}

// Q4_K: d, dmin (f16), 12 bytes of 6-bit scales and mins (one pair per 32
// weights), 128 bytes of 4-bit values; w = d·sc·q − dmin·m.
func dequantQ4_K(dst []float32, b []byte) {
	d, dmin := half(b), half(b[2:])
	scales, qs := b[4:16], b[16:144]
	for j := range 4 { // 64 weights: 32 low nibbles, then 32 high nibbles
		sc1, m1 := scaleMinK4(2*j, scales)
		sc2, m2 := scaleMinK4(2*j+1, scales)
		d1, min1 := d*float32(sc1), dmin*float32(m1)
		d2, min2 := d*float32(sc2), dmin*float32(m2)
		q := qs[32*j : 32*j+32]
		y := dst[64*j : 64*j+64]
		for l := range 32 {
			y[l] = float32(d1*float32(q[l]&0x0f)) - min1
			y[l+32] = float32(d2*float32(q[l]>>4)) - min2
		}
	}
}

// Q5_K: Q4_K plus 32 bytes of fifth bits.
func dequantQ5_K(dst []float32, b []byte) {
	d, dmin := half(b), half(b[2:])
	scales, qh, qs := b[4:16], b[16:48], b[48:176]
	for j := range 4 {
		sc1, m1 := scaleMinK4(2*j, scales)
		sc2, m2 := scaleMinK4(2*j+1, scales)
		d1, min1 := d*float32(sc1), dmin*float32(m1)
		d2, min2 := d*float32(sc2), dmin*float32(m2)
		u1, u2 := byte(1)<<(2*j), byte(2)<<(2*j)
		q := qs[32*j : 32*j+32]
		y := dst[64*j : 64*j+64]
		for l := range 32 {
			lo, hi := q[l]&0x0f, q[l]>>4
			if qh[l]&u1 != 0 {
				lo += 16
			}
			if qh[l]&u2 != 0 {
				hi += 16
			}
			y[l] = float32(d1*float32(lo)) - min1
			y[l+32] = float32(d2*float32(hi)) - min2
		}
	}
}

// Q6_K: 128 bytes of low nibbles, 64 bytes of 2-bit highs, 16 int8 scales
// (one per 16 weights), d (f16); w = d·sc·(q − 32).
func dequantQ6_K(dst []float32, b []byte) {
	d := half(b[208:])
	for n := range 2 { // two halves of 128 weights
		ql := b[64*n : 64*n+64]
		qh := b[128+32*n : 128+32*n+32]
		sc := b[192+8*n : 192+8*n+8]
		y := dst[128*n : 128*n+128]
		for l := range 32 {
			is := l / 16
			q1 := int(ql[l]&0x0f|(qh[l]>>0&3)<<4) - 32
			q2 := int(ql[l+32]&0x0f|(qh[l]>>2&3)<<4) - 32
			q3 := int(ql[l]>>4|(qh[l]>>4&3)<<4) - 32
			q4 := int(ql[l+32]>>4|(qh[l]>>6&3)<<4) - 32
			y[l] = d * float32(int8(sc[is])) * float32(q1)
			y[l+32] = d * float32(int8(sc[is+2])) * float32(q2)
			y[l+64] = d * float32(int8(sc[is+4])) * float32(q3)
			y[l+96] = d * float32(int8(sc[is+6])) * float32(q4)
		}
	}
}
