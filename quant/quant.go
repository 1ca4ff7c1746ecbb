// Package quant holds llama.cpp-compatible quantized weight blocks and the
// kernels that compute with them without widening a whole matrix to float32.
//
// Each block format has a plain scalar reference (ref.go: dequantize, and a
// quantizer used to make test data) beside the dot products the matmul runs
// (dot_ref.go, the pure-Go path that is always built and always correct;
// dot_amd64.s, AVX2 and AVX-512 VNNI versions of the same sums). As in
// llama.cpp, activations are quantized per block before a dot product: to
// Q8 blocks of 32 (with the block's sum, for the formats that carry a
// minimum) for Q4_0/Q4_1/Q5_0/Q5_1/Q8_0, and to Q8_K blocks of 256 (with
// sums of 16) for the K-quants. The Q8 activation rounding follows
// llama.cpp's x86 path (scale 127/amax, round half to even, scale stored
// as float16), so a row's products match llama.cpp's to float rounding.
// A Matrix with F32Activations keeps the activations in float32 instead
// (f32act.go): the dequantized model's numbers, at a little more compute.
//
// Type numbers are GGML's, so a GGUF tensor's type maps to a Type directly.
package quant

import (
	"fmt"
	"math"
	"strings"
	"unsafe"
)

// Type is a GGML tensor type (the number GGUF files store).
type Type uint32

// The GGML types this package computes with.
const (
	F32  Type = 0
	F16  Type = 1
	Q4_0 Type = 2
	Q4_1 Type = 3
	Q5_0 Type = 6
	Q5_1 Type = 7
	Q8_0 Type = 8
	Q8_1 Type = 9
	Q4_K Type = 12
	Q5_K Type = 13
	Q6_K Type = 14
	Q8_K Type = 15
)

// QK is the block length of the 32-element formats, QKK that of the
// K-quants' super-blocks.
const (
	QK  = 32
	QKK = 256
)

var typeInfo = map[Type]struct {
	name       string
	block      int // elements per block
	blockBytes int
}{
	Q4_0: {"Q4_0", QK, 18},
	Q4_1: {"Q4_1", QK, 20},
	Q5_0: {"Q5_0", QK, 22},
	Q5_1: {"Q5_1", QK, 24},
	Q8_0: {"Q8_0", QK, 34},
	Q4_K: {"Q4_K", QKK, 144},
	Q5_K: {"Q5_K", QKK, 176},
	Q6_K: {"Q6_K", QKK, 210},
}

func (t Type) String() string {
	if i, ok := typeInfo[t]; ok {
		return i.name
	}
	return fmt.Sprintf("type(%d)", uint32(t))
}

// Supported reports whether t is a block format a Matrix can hold.
func (t Type) Supported() bool { _, ok := typeInfo[t]; return ok }

// BlockSize is the number of elements in one block of t.
func (t Type) BlockSize() int { return typeInfo[t].block }

// BlockBytes is the size in bytes of one block of t.
func (t Type) BlockBytes() int { return typeInfo[t].blockBytes }

// RowBytes is the size of a row of cols elements, or an error when t is not
// a supported block format or cols is not a whole number of blocks.
func (t Type) RowBytes(cols int) (int, error) {
	i, ok := typeInfo[t]
	if !ok {
		return 0, fmt.Errorf("quant: unsupported tensor type %v", t)
	}
	if cols <= 0 || cols%i.block != 0 {
		return 0, fmt.Errorf("quant: %v row of %d elements is not a whole number of %d-element blocks", t, cols, i.block)
	}
	return cols / i.block * i.blockBytes, nil
}

// Matrix is a [Rows, Cols] weight matrix kept as its quantized blocks, one
// row after another (the layout of a GGUF tensor with ne0 = Cols).
type Matrix struct {
	Type       Type
	Rows, Cols int
	Data       []byte
	rowBytes   int
	// F32Activations keeps the activations of products with m in float32
	// (f32act.go) instead of quantizing them to 8 bits per block as
	// llama.cpp does: the dequantized float32 model's numbers, at a little
	// more compute per weight.
	F32Activations bool
	pk             *packedState // interleaved copy for decode, made on first use
	// owner is kept reachable as long as the matrix is: a loader whose
	// Data lives in a file mapping attaches the mapping's closer to it.
	owner any
}

// NewMatrix checks that data holds exactly rows rows of cols elements of t.
// It keeps data (no copy): a caller that maps a file must keep the mapping.
func NewMatrix(t Type, rows, cols int, data []byte) (*Matrix, error) {
	rb, err := t.RowBytes(cols)
	if err != nil {
		return nil, err
	}
	if rows <= 0 {
		return nil, fmt.Errorf("quant: %v matrix with %d rows", t, rows)
	}
	if len(data) != rows*rb {
		return nil, fmt.Errorf("quant: %v matrix [%d, %d] needs %d bytes, have %d", t, rows, cols, rows*rb, len(data))
	}
	return &Matrix{Type: t, Rows: rows, Cols: cols, Data: data, rowBytes: rb, pk: new(packedState)}, nil
}

// SetOwner ties owner's lifetime to m's: owner stays reachable while m is
// (a file mapping that holds Data, unmapped by a cleanup on owner). It
// also marks Data as a read-only file mapping: once m has its packed copy
// (packed.go), Data's pages leave the resident set (they are read again,
// from the page cache, only by DequantizeRows and the one-row kernels).
func (m *Matrix) SetOwner(owner any) { m.owner = owner }

// Row returns the blocks of row r.
func (m *Matrix) Row(r int) []byte { return m.Data[r*m.rowBytes : (r+1)*m.rowBytes] }

// Bytes is the memory the blocks take.
func (m *Matrix) Bytes() int64 { return int64(len(m.Data)) }

// F16ToF32 widens an IEEE half-precision value (exact).
func F16ToF32(h uint16) float32 { return f16tab[h] }

var f16tab = func() *[1 << 16]float32 {
	var t [1 << 16]float32
	for i := range t {
		t[i] = f16Widen(uint16(i))
	}
	return &t
}()

func f16Widen(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	man := uint32(h) & 0x3ff
	switch {
	case exp == 0 && man == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: man·2^-24
		v := float32(man) * (1.0 / (1 << 24))
		if sign != 0 {
			v = -v
		}
		return v
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	}
	return math.Float32frombits(sign | (exp+112)<<23 | man<<13)
}

// F32ToF16 rounds to the nearest half-precision value (ties to even), as
// the F16C instruction llama.cpp uses on x86 does.
func F32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	man := b & 0x7fffff
	if exp == 0xff { // inf, nan
		if man != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		if e < -10 {
			return sign
		}
		man |= 0x800000
		shift := uint32(14 - e)
		half := uint32(1) << (shift - 1)
		r := man >> shift
		rem := man & (1<<shift - 1)
		if rem > half || (rem == half && r&1 == 1) {
			r++
		}
		return sign | uint16(r)
	}
	r := uint32(e)<<10 | man>>13
	rem := man & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && r&1 == 1) {
		r++ // may carry into the exponent, which is still correct
	}
	return sign | uint16(r)
}

// uintptrOf is the address of b's first byte (page alignment only).
func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// Kernels names the instruction sets this process's quantized products run
// on: "avx2" or "avx512" (CLAWRL_AVX512=0 keeps AVX2), with "vnni" where
// the int8-activation kernels use VPDPBUSD (AVX-512's; "avx-vnni" where
// the Q4_K and Q6_K ones use its VEX form) and "amx-int8" where Q4_K and
// Q6_K products of many tokens run on AMX tiles (the VNNI kernels' bits);
// "go" for the pure-Go kernels. A run records it beside blas's kernels
// (blas.SgemmKernel, blas.BF16Kernel), so that it says what it ran on.
func Kernels() string {
	var s []string
	switch {
	case hasAVX512:
		s = append(s, "avx512")
	case hasAVX2:
		s = append(s, "avx2")
	default:
		return "go"
	}
	switch {
	case hasVNNI:
		s = append(s, "vnni")
	case hasAVXVNNI:
		s = append(s, "avx-vnni")
	}
	if hasAMXInt8 {
		s = append(s, "amx-int8")
	}
	return strings.Join(s, "+")
}
