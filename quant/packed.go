package quant

import (
	"encoding/binary"
	"sync"
	"sync/atomic"
)

// Interleaved ("packed") weights for decode. The one-row dot products spend
// most of their instructions per 32-value block on the block's scales
// (widen two float16s, broadcast, multiply) and end each row with a
// horizontal sum. Packing eight rows together puts the eight rows' scales
// side by side, so one vector instruction handles all eight, and each of
// the eight int32 lanes of a VPDPBUSD accumulates one row: the output is
// eight rows in one vector, with no horizontal sums. llama.cpp's "repack"
// buffers (ggml-cpu/repack.cpp) use the same idea for Q4_0 and Q4_K.
//
// Layout, per group g of packRows rows and block b, at (g·nb + b)·size:
//
//	Q4_1 (160 bytes): four 32-byte vectors, vector k holding bytes
//	4k..4k+3 of each row's 16 nibble bytes (row r at 4r: the low nibbles
//	are values 4k..4k+3, the high ones 16+4k..16+4k+3); then the eight
//	rows' d (float16), then their m.
//	Q8_0 (272 bytes): eight 32-byte vectors, vector k holding values
//	4k..4k+3 of each row as unsigned bytes (w+128, so VPDPBUSD can take
//	them; the kernel subtracts 128·Σa per four values); then the eight
//	rows' d.
//	Q4_0 (144 bytes): Q4_1's nibble vectors, then the eight rows' d.
//	Q5_0 (176 bytes), Q5_1 (192): the same nibble vectors, then one
//	vector of the rows' fifth bits (fifthBits' order), then their d (and
//	m for Q5_1).
//	Q4_K (1184 bytes per super-block of 256): 32 vectors, vector 8j+k
//	holding bytes 32j+4k..32j+4k+3 of each row's 128 nibble bytes (low
//	nibbles: values 64j+4k.. of sub-block 2j; high: 64j+32+4k.. of
//	sub-block 2j+1); then per sub-block s the eight rows' 6-bit scales
//	(8 bytes each, unpacked from the 12-byte form), then their minimums,
//	then the rows' d and dmin (float16).
//	Q5_K (1440 bytes): Q4_K's nibble vectors (from the block's qs), then
//	8 vectors of qh, vector k holding bytes 4k..4k+3 of each row's 32 qh
//	bytes, then scales, minimums, d and dmin as in Q4_K.
//	Q6_K (1680 bytes per super-block): 32 vectors of ql, vector
//	16n+8p+k holding bytes 64n+32p+4k..+3 of each row's ql; 16 vectors of
//	qh, vector 8n+k holding bytes 32n+4k..+3 of each row's qh (both as
//	in the block, so the kernel rebuilds values as the reference does);
//	then per 16 values s the eight rows' int8 scales; then their d.
//
// The packed copy is as large as the blocks it comes from; Data stays as
// it is (the trainer and DequantizeRows read it). For Q4_1 and Q8_0 each
// row's float arithmetic is the one-row kernel's (and llama.cpp's), so the
// results are bitwise those of the one-row path. Q4_0 (which has no one-row
// assembly kernel) sums each row's block in one int32 lane. The K-quant kernels sum
// each sub-block exactly in one int32 lane per row and apply the scales as
// integers, so a super-block's integer sum is exact, then fold it in with
// one float FMA per super-block (the reference's d·Σ − dmin·Σm, fused): the
// results equal the reference's within float rounding, not bitwise.
const packRows = 8

// packedBlockBytes is the size of one packed (group, block) for t, 0 when t
// has no packed form.
func packedBlockBytes(t Type) int {
	switch t {
	case Q4_0:
		return 144
	case Q4_1:
		return 160
	case Q5_0:
		return 176
	case Q5_1:
		return 192
	case Q8_0:
		return 272
	case Q4_K:
		return 1184
	case Q5_K:
		return 1440
	case Q6_K:
		return 1680
	}
	return 0
}

// packedState is a matrix's packed copy, made once on first use.
type packedState struct {
	once sync.Once
	data []byte
	made atomic.Bool // data is set (for readers that must not make it)
}

// packedData returns m's interleaved copy, or nil when this CPU has no
// kernel for it or the rows are not a whole number of groups.
func (m *Matrix) packedData() []byte {
	if gemv8[m.Type] == nil || m.Rows%packRows != 0 {
		return nil
	}
	if m.pk == nil {
		return nil
	}
	m.pk.once.Do(func() {
		m.pk.data = pack(m)
		m.pk.made.Store(true)
		if m.owner != nil { // Data is a file mapping: decode reads only the copy
			releasePages(m.Data)
		}
	})
	return m.pk.data
}

// packedCopy is m's packed copy if one has been made, else nil (it makes
// none).
func (m *Matrix) packedCopy() []byte {
	if m.pk == nil || !m.pk.made.Load() {
		return nil
	}
	return m.pk.data
}

// pack builds the interleaved layout of m (see packRows).
func pack(m *Matrix) []byte {
	nb := m.Cols / m.Type.BlockSize()
	size := packedBlockBytes(m.Type)
	out := make([]byte, m.Rows/packRows*nb*size)
	bb := m.Type.BlockBytes()
	for g := 0; g < m.Rows/packRows; g++ {
		for b := 0; b < nb; b++ {
			dst := out[(g*nb+b)*size : (g*nb+b+1)*size]
			for r := 0; r < packRows; r++ {
				blk := m.Row(g*packRows + r)[b*bb : (b+1)*bb]
				switch m.Type {
				case Q4_0:
					for k := 0; k < 4; k++ {
						copy(dst[32*k+4*r:32*k+4*r+4], blk[2+4*k:6+4*k])
					}
					copy(dst[128+2*r:130+2*r], blk[0:2])
				case Q4_1:
					for k := 0; k < 4; k++ {
						copy(dst[32*k+4*r:32*k+4*r+4], blk[4+4*k:8+4*k])
					}
					copy(dst[128+2*r:130+2*r], blk[0:2])
					copy(dst[144+2*r:146+2*r], blk[2:4])
				case Q8_0:
					for k := 0; k < 8; k++ {
						for j := 0; j < 4; j++ {
							dst[32*k+4*r+j] = blk[2+4*k+j] ^ 0x80
						}
					}
					copy(dst[256+2*r:258+2*r], blk[0:2])
				case Q5_0, Q5_1:
					qs, qh, d := blk[6:22], binary.LittleEndian.Uint32(blk[2:]), blk[0:4]
					if m.Type == Q5_1 {
						qs, qh = blk[8:24], binary.LittleEndian.Uint32(blk[4:])
					}
					for k := 0; k < 4; k++ {
						copy(dst[32*k+4*r:32*k+4*r+4], qs[4*k:4*k+4])
					}
					binary.LittleEndian.PutUint32(dst[128+4*r:], fifthBits(qh))
					copy(dst[160+2*r:162+2*r], d[0:2])
					if m.Type == Q5_1 {
						copy(dst[176+2*r:178+2*r], d[2:4])
					}
				case Q4_K:
					for v := 0; v < 32; v++ {
						copy(dst[32*v+4*r:32*v+4*r+4], blk[16+4*v:20+4*v])
					}
					for s := 0; s < 8; s++ {
						dst[1024+8*s+r], dst[1088+8*s+r] = scaleMinK4(s, blk[4:16])
					}
					copy(dst[1152+2*r:1154+2*r], blk[0:2])
					copy(dst[1168+2*r:1170+2*r], blk[2:4])
				case Q5_K:
					for v := 0; v < 32; v++ {
						copy(dst[32*v+4*r:32*v+4*r+4], blk[48+4*v:52+4*v])
					}
					for k := 0; k < 8; k++ {
						copy(dst[1024+32*k+4*r:1024+32*k+4*r+4], blk[16+4*k:20+4*k])
					}
					for s := 0; s < 8; s++ {
						dst[1280+8*s+r], dst[1344+8*s+r] = scaleMinK4(s, blk[4:16])
					}
					copy(dst[1408+2*r:1410+2*r], blk[0:2])
					copy(dst[1424+2*r:1426+2*r], blk[2:4])
				case Q6_K:
					// ql (128 bytes) then qh (64): 48 vectors of byte
					// columns, in block order.
					for v := 0; v < 48; v++ {
						copy(dst[32*v+4*r:32*v+4*r+4], blk[4*v:4*v+4])
					}
					for s := 0; s < 16; s++ {
						dst[1536+8*s+r] = blk[192+s]
					}
					copy(dst[1664+2*r:1666+2*r], blk[208:210])
				}
			}
		}
	}
	return out
}

// fifthBits rearranges a Q5_0/Q5_1 block's fifth bits (bit j: value j)
// for the packed kernel: bit 8i+g holds element i of value group g, where
// groups 0..3 are values 4g..4g+3 and groups 4..7 values 16+4(g-4)...
func fifthBits(qh uint32) uint32 {
	var out uint32
	for g := 0; g < 8; g++ {
		first := 4 * g // values 4g.. for g < 4; 16+4(g-4) = 4g also
		for i := 0; i < 4; i++ {
			out |= (qh >> (first + i) & 1) << (8*i + g)
		}
	}
	return out
}

// gemv8Func computes out[0:8] for one packed group (nb blocks at w)
// against one activation row: qs, its scales ds ((d, d·Σq) pairs, or one
// d per super-block for the K-quants) and the sums its type reads
// (Act.sums: the exact Σq per block for Q4_0 and Q5_0, 128·Σ of each four values
// for Q8_0, Σ of each 32 for Q4_K and Q5_K, 32·Σ of each 16 for Q6_K).
type gemv8Func func(nb int, w *byte, qs *int8, ds *float32, sums *int32, out *float32)

// gemv8 are the packed kernels this CPU runs.
var gemv8 = fastGemv8(hasVNNI, hasAVXVNNI, hasAVX2)

// gemv8x4Func is gemv8Func for four tokens at once: their qs rows ldq
// bytes apart, scales ldd and sums lds bytes apart, outputs ldo bytes
// apart. Each output is bitwise the one-token kernel's.
type gemv8x4Func func(nb int, w *byte, qs *int8, ldq int, ds *float32, ldd int, sums *int32, lds int, out *float32, ldo int)

// gemv8x4 are the four-token packed kernels this CPU runs.
var gemv8x4 = fastGemv8x4(hasVNNI)

// gemv8x2 are the two-token packed kernels this CPU runs (gemv8x4Func's
// arguments): a decode batch's tokens past its fours, two at a time.
//
//go:generate go run packedk2_gen.go
//go:generate go run packedkv_gen.go
var gemv8x2 = fastGemv8x2(hasVNNI, hasAVXVNNI, hasAVX2)
