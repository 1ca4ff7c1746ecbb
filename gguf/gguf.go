// Package gguf reads GGUF files, the single-file model format of llama.cpp,
// Ollama and LM Studio: a header of typed metadata key/value pairs, a table
// of tensor infos (name, shape, ggml type, offset) and the tensor data,
// aligned. Files are memory-mapped; a Tensor's Data points into the mapping.
//
// The parser trusts nothing in the file: every count and length is checked
// against the bytes that remain before anything is allocated, so a corrupt
// or truncated file is an error naming the file and what was expected, never
// a panic or a huge allocation.
//
// dequant.go holds the reference (scalar) dequantization of each block
// format, the ground truth for faster kernels elsewhere.
package gguf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"sort"
	"strings"

	"github.com/clawrl/clawrl/internal/mmap"
)

// Magic is the first four bytes of every GGUF file.
const Magic = "GGUF"

// DefaultAlignment is the data alignment when general.alignment is absent.
const DefaultAlignment = 32

// ValueType is the type tag of a metadata value.
type ValueType uint32

// The metadata value types of the GGUF spec.
const (
	TypeUint8   ValueType = 0
	TypeInt8    ValueType = 1
	TypeUint16  ValueType = 2
	TypeInt16   ValueType = 3
	TypeUint32  ValueType = 4
	TypeInt32   ValueType = 5
	TypeFloat32 ValueType = 6
	TypeBool    ValueType = 7
	TypeString  ValueType = 8
	TypeArray   ValueType = 9
	TypeUint64  ValueType = 10
	TypeInt64   ValueType = 11
	TypeFloat64 ValueType = 12
)

var valueTypeNames = [...]string{"uint8", "int8", "uint16", "int16", "uint32", "int32", "float32", "bool", "string", "array", "uint64", "int64", "float64"}

func (t ValueType) String() string {
	if int(t) < len(valueTypeNames) {
		return valueTypeNames[t]
	}
	return fmt.Sprintf("value type %d", uint32(t))
}

// size is the encoded size of a fixed-size value type, 0 for string and array.
func (t ValueType) size() int {
	switch t {
	case TypeUint8, TypeInt8, TypeBool:
		return 1
	case TypeUint16, TypeInt16:
		return 2
	case TypeUint32, TypeInt32, TypeFloat32:
		return 4
	case TypeUint64, TypeInt64, TypeFloat64:
		return 8
	}
	return 0
}

// Value is one metadata value. Scalars are uint8, int8, uint16, int16,
// uint32, int32, float32, bool, string, uint64, int64 or float64; arrays
// are an Array.
type Value any

// Array is a metadata array. Values is a typed slice: []uint8, []int8,
// []uint16, []int16, []uint32, []int32, []float32, []bool, []string,
// []uint64, []int64, []float64, or []Array for nested arrays.
type Array struct {
	Elem   ValueType
	Values any
}

// Len is the number of elements.
func (a Array) Len() int {
	switch v := a.Values.(type) {
	case []uint8:
		return len(v)
	case []int8:
		return len(v)
	case []uint16:
		return len(v)
	case []int16:
		return len(v)
	case []uint32:
		return len(v)
	case []int32:
		return len(v)
	case []float32:
		return len(v)
	case []bool:
		return len(v)
	case []string:
		return len(v)
	case []uint64:
		return len(v)
	case []int64:
		return len(v)
	case []float64:
		return len(v)
	case []Array:
		return len(v)
	}
	return 0
}

// KV is one metadata key/value pair, in file order.
type KV struct {
	Key   string
	Value Value
}

// TensorInfo describes one tensor: its name, its dims as GGUF stores them
// (innermost first: a [out, in] matrix is Dims {in, out}), its type and the
// offset of its data from the start of the data section.
type TensorInfo struct {
	Name   string
	Dims   []uint64
	Type   Type
	Offset uint64
	Size   uint64 // bytes of data
}

// Elements is the product of the dims.
func (t *TensorInfo) Elements() uint64 {
	n := uint64(1)
	for _, d := range t.Dims {
		n *= d
	}
	return n
}

// Header is everything before the tensor data.
type Header struct {
	Version    uint32
	KV         []KV
	Tensors    []TensorInfo
	Alignment  uint64
	DataOffset uint64 // where the data section starts in the file
	byKey      map[string]int
	byName     map[string]int
}

// Errors callers may test for with errors.Is.
var (
	ErrNotGGUF     = errors.New("not a GGUF file")
	ErrTruncated   = errors.New("truncated")
	ErrUnsupported = errors.New("unsupported")
	ErrNotFound    = errors.New("not found")
)

// Limits on what a header may declare; real files stay far below them.
const (
	maxStringLen  = 1 << 30 // a chat template or a token is far shorter
	maxDims       = 4       // GGML_MAX_DIMS
	maxArrayDepth = 4
)

// reader is a bounds-checked little-endian cursor over the header bytes.
type reader struct {
	b   []byte
	off uint64
	err error
}

func (r *reader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// need reports whether n more bytes are there, failing the reader if not.
func (r *reader) need(n uint64, what string) bool {
	if r.err != nil {
		return false
	}
	if n > uint64(len(r.b))-r.off {
		r.fail(fmt.Errorf("%w at byte %d: %s needs %d bytes, %d remain", ErrTruncated, r.off, what, n, uint64(len(r.b))-r.off))
		return false
	}
	return true
}

func (r *reader) bytes(n uint64, what string) []byte {
	if !r.need(n, what) {
		return nil
	}
	b := r.b[r.off : r.off+n]
	r.off += n
	return b
}

func (r *reader) u8(what string) uint8 {
	b := r.bytes(1, what)
	if b == nil {
		return 0
	}
	return b[0]
}

func (r *reader) u16(what string) uint16 {
	b := r.bytes(2, what)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint16(b)
}

func (r *reader) u32(what string) uint32 {
	b := r.bytes(4, what)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}

func (r *reader) u64(what string) uint64 {
	b := r.bytes(8, what)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(b)
}

func (r *reader) str(what string) string {
	n := r.u64(what + " length")
	if r.err != nil {
		return ""
	}
	if n > maxStringLen {
		r.fail(fmt.Errorf("%s: length %d is implausible (limit %d)", what, n, maxStringLen))
		return ""
	}
	return string(r.bytes(n, what))
}

// ParseHeader parses the header at the start of data, checking that every
// tensor's data lies inside size bytes (the file's length; data may hold
// only the header's bytes or the whole file).
func ParseHeader(data []byte, size uint64) (*Header, error) {
	r := &reader{b: data}
	magic := r.bytes(4, "magic")
	if r.err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotGGUF, r.err)
	}
	if string(magic) != Magic {
		return nil, fmt.Errorf("%w: magic %q, want %q", ErrNotGGUF, magic, Magic)
	}
	h := &Header{Version: r.u32("version")}
	switch {
	case r.err != nil:
		return nil, r.err
	case h.Version == 1:
		return nil, fmt.Errorf("GGUF version 1 is %w (32-bit counts; convert the file again with a newer llama.cpp)", ErrUnsupported)
	case h.Version == 2, h.Version == 3:
	case bits.ReverseBytes32(h.Version) == 2 || bits.ReverseBytes32(h.Version) == 3:
		return nil, fmt.Errorf("a big-endian GGUF file is %w (convert it with gguf-convert-endian)", ErrUnsupported)
	default:
		return nil, fmt.Errorf("GGUF version %d is %w (want 2 or 3)", h.Version, ErrUnsupported)
	}
	nTensors := r.u64("tensor count")
	nKV := r.u64("metadata count")
	if r.err != nil {
		return nil, r.err
	}
	// Each pair needs at least a key length, a type and a value byte; each
	// tensor info at least a name length, n_dims, type and offset.
	if remain := uint64(len(data)) - r.off; nKV > remain/13 || nTensors > remain/24 {
		return nil, fmt.Errorf("%w: header declares %d metadata pairs and %d tensors, more than its %d bytes can hold", ErrTruncated, nKV, nTensors, remain)
	}
	h.KV = make([]KV, 0, nKV)
	h.byKey = make(map[string]int, nKV)
	for i := uint64(0); i < nKV; i++ {
		key := r.str(fmt.Sprintf("metadata[%d] key", i))
		typ := ValueType(r.u32("metadata " + key + " type"))
		v := r.value(typ, key, 0)
		if r.err != nil {
			return nil, r.err
		}
		if _, dup := h.byKey[key]; dup {
			return nil, fmt.Errorf("metadata key %q appears twice", key)
		}
		h.byKey[key] = len(h.KV)
		h.KV = append(h.KV, KV{Key: key, Value: v})
	}
	h.Alignment = DefaultAlignment
	if v, ok := h.byKey["general.alignment"]; ok {
		a, ok := asUint(h.KV[v].Value)
		if !ok || a == 0 || a&(a-1) != 0 || a > 1<<20 {
			return nil, fmt.Errorf("general.alignment %v: want a power of two", h.KV[v].Value)
		}
		h.Alignment = a
	}
	h.Tensors = make([]TensorInfo, 0, nTensors)
	h.byName = make(map[string]int, nTensors)
	for i := uint64(0); i < nTensors; i++ {
		t := TensorInfo{Name: r.str(fmt.Sprintf("tensor[%d] name", i))}
		nDims := r.u32("tensor " + t.Name + " n_dims")
		if r.err != nil {
			return nil, r.err
		}
		if nDims > maxDims {
			return nil, fmt.Errorf("tensor %s: %d dims, at most %d are supported", t.Name, nDims, maxDims)
		}
		t.Dims = make([]uint64, nDims)
		elems := uint64(1)
		for d := range t.Dims {
			t.Dims[d] = r.u64("tensor " + t.Name + " dim")
			if t.Dims[d] != 0 && elems > math.MaxInt64/t.Dims[d] {
				return nil, fmt.Errorf("tensor %s: dims %v overflow", t.Name, t.Dims)
			}
			elems *= t.Dims[d]
		}
		t.Type = Type(r.u32("tensor " + t.Name + " type"))
		t.Offset = r.u64("tensor " + t.Name + " offset")
		if r.err != nil {
			return nil, r.err
		}
		info, ok := t.Type.info()
		if !ok {
			return nil, fmt.Errorf("tensor %s: ggml type %v is %w", t.Name, t.Type, ErrUnsupported)
		}
		if len(t.Dims) > 0 && t.Dims[0]%uint64(info.BlockSize) != 0 {
			return nil, fmt.Errorf("tensor %s: first dim %d is not a multiple of %s's block size %d", t.Name, t.Dims[0], info.Name, info.BlockSize)
		}
		if elems/uint64(info.BlockSize) > math.MaxInt64/uint64(info.BlockBytes) {
			return nil, fmt.Errorf("tensor %s: dims %v overflow", t.Name, t.Dims)
		}
		t.Size = elems / uint64(info.BlockSize) * uint64(info.BlockBytes)
		if t.Offset%h.Alignment != 0 {
			return nil, fmt.Errorf("tensor %s: offset %d is not aligned to %d", t.Name, t.Offset, h.Alignment)
		}
		if _, dup := h.byName[t.Name]; dup {
			return nil, fmt.Errorf("tensor %s appears twice", t.Name)
		}
		h.byName[t.Name] = len(h.Tensors)
		h.Tensors = append(h.Tensors, t)
	}
	h.DataOffset = (r.off + h.Alignment - 1) / h.Alignment * h.Alignment
	if nTensors > 0 && h.DataOffset > size {
		return nil, fmt.Errorf("%w: data section starts at byte %d, the file has %d", ErrTruncated, h.DataOffset, size)
	}
	dataLen := size - min(size, h.DataOffset)
	for i := range h.Tensors {
		t := &h.Tensors[i]
		if t.Offset > dataLen || t.Size > dataLen-t.Offset {
			return nil, fmt.Errorf("tensor %s: %w: data [%d, %d) of the data section, which has %d bytes", t.Name, ErrTruncated, t.Offset, t.Offset+t.Size, dataLen)
		}
	}
	return h, nil
}

// value reads one value of type typ.
func (r *reader) value(typ ValueType, key string, depth int) Value {
	what := "metadata " + key
	switch typ {
	case TypeUint8:
		return r.u8(what)
	case TypeInt8:
		return int8(r.u8(what))
	case TypeUint16:
		return r.u16(what)
	case TypeInt16:
		return int16(r.u16(what))
	case TypeUint32:
		return r.u32(what)
	case TypeInt32:
		return int32(r.u32(what))
	case TypeFloat32:
		return math.Float32frombits(r.u32(what))
	case TypeBool:
		b := r.u8(what)
		if b > 1 {
			r.fail(fmt.Errorf("%s: bool byte %d, want 0 or 1", what, b))
		}
		return b == 1
	case TypeString:
		return r.str(what)
	case TypeUint64:
		return r.u64(what)
	case TypeInt64:
		return int64(r.u64(what))
	case TypeFloat64:
		return math.Float64frombits(r.u64(what))
	case TypeArray:
		if depth >= maxArrayDepth {
			r.fail(fmt.Errorf("%s: arrays nested deeper than %d", what, maxArrayDepth))
			return nil
		}
		elem := ValueType(r.u32(what + " element type"))
		n := r.u64(what + " element count")
		if r.err != nil {
			return nil
		}
		min := uint64(elem.size())
		switch elem {
		case TypeString:
			min = 8
		case TypeArray:
			min = 12
		}
		if min == 0 {
			r.fail(fmt.Errorf("%s: array element type %v is %w", what, elem, ErrUnsupported))
			return nil
		}
		if n > (uint64(len(r.b))-r.off)/min {
			r.fail(fmt.Errorf("%w: %s: array of %d %v needs at least %d bytes, %d remain", ErrTruncated, what, n, elem, n*min, uint64(len(r.b))-r.off))
			return nil
		}
		return Array{Elem: elem, Values: r.array(elem, int(n), key, depth)}
	}
	r.fail(fmt.Errorf("%s: value type %v is %w", what, typ, ErrUnsupported))
	return nil
}

// array reads n elements (n already checked against the bytes left).
func (r *reader) array(elem ValueType, n int, key string, depth int) any {
	what := "metadata " + key
	if sz := elem.size(); sz > 0 {
		b := r.bytes(uint64(n*sz), what)
		if b == nil {
			return nil
		}
		switch elem {
		case TypeUint8:
			return append([]uint8(nil), b...)
		case TypeInt8:
			out := make([]int8, n)
			for i := range out {
				out[i] = int8(b[i])
			}
			return out
		case TypeBool:
			out := make([]bool, n)
			for i := range out {
				if b[i] > 1 {
					r.fail(fmt.Errorf("%s[%d]: bool byte %d, want 0 or 1", what, i, b[i]))
					return nil
				}
				out[i] = b[i] == 1
			}
			return out
		case TypeUint16:
			out := make([]uint16, n)
			for i := range out {
				out[i] = binary.LittleEndian.Uint16(b[2*i:])
			}
			return out
		case TypeInt16:
			out := make([]int16, n)
			for i := range out {
				out[i] = int16(binary.LittleEndian.Uint16(b[2*i:]))
			}
			return out
		case TypeUint32:
			out := make([]uint32, n)
			for i := range out {
				out[i] = binary.LittleEndian.Uint32(b[4*i:])
			}
			return out
		case TypeInt32:
			out := make([]int32, n)
			for i := range out {
				out[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
			}
			return out
		case TypeFloat32:
			out := make([]float32, n)
			for i := range out {
				out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
			}
			return out
		case TypeUint64:
			out := make([]uint64, n)
			for i := range out {
				out[i] = binary.LittleEndian.Uint64(b[8*i:])
			}
			return out
		case TypeInt64:
			out := make([]int64, n)
			for i := range out {
				out[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
			}
			return out
		case TypeFloat64:
			out := make([]float64, n)
			for i := range out {
				out[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
			}
			return out
		}
	}
	if elem == TypeString {
		out := make([]string, n)
		for i := range out {
			out[i] = r.str(what)
			if r.err != nil {
				return nil
			}
		}
		return out
	}
	out := make([]Array, n)
	for i := range out {
		v := r.value(TypeArray, key, depth+1)
		if r.err != nil {
			return nil
		}
		out[i] = v.(Array)
	}
	return out
}

// Get returns the value of key.
func (h *Header) Get(key string) (Value, bool) {
	i, ok := h.byKey[key]
	if !ok {
		return nil, false
	}
	return h.KV[i].Value, true
}

// String returns a string value; ok is false when key is absent or not a string.
func (h *Header) String(key string) (string, bool) {
	v, _ := h.Get(key)
	s, ok := v.(string)
	return s, ok
}

// Uint returns an integer value of any width and signedness as uint64; ok is
// false when key is absent, not an integer, or negative.
func (h *Header) Uint(key string) (uint64, bool) {
	v, _ := h.Get(key)
	return asUint(v)
}

// Float returns a float or integer value as float64.
func (h *Header) Float(key string) (float64, bool) {
	v, _ := h.Get(key)
	switch x := v.(type) {
	case float32:
		return float64(x), true
	case float64:
		return x, true
	}
	if u, ok := asUint(v); ok {
		return float64(u), true
	}
	return 0, false
}

// Bool returns a bool value.
func (h *Header) Bool(key string) (bool, bool) {
	v, _ := h.Get(key)
	b, ok := v.(bool)
	return b, ok
}

// Strings returns a string array.
func (h *Header) Strings(key string) ([]string, bool) {
	v, _ := h.Get(key)
	a, ok := v.(Array)
	if !ok {
		return nil, false
	}
	s, ok := a.Values.([]string)
	return s, ok
}

// Ints returns an integer array of any element width as int64s.
func (h *Header) Ints(key string) ([]int64, bool) {
	v, _ := h.Get(key)
	a, ok := v.(Array)
	if !ok {
		return nil, false
	}
	n := a.Len()
	out := make([]int64, n)
	switch x := a.Values.(type) {
	case []uint8:
		for i, e := range x {
			out[i] = int64(e)
		}
	case []int8:
		for i, e := range x {
			out[i] = int64(e)
		}
	case []uint16:
		for i, e := range x {
			out[i] = int64(e)
		}
	case []int16:
		for i, e := range x {
			out[i] = int64(e)
		}
	case []uint32:
		for i, e := range x {
			out[i] = int64(e)
		}
	case []int32:
		for i, e := range x {
			out[i] = int64(e)
		}
	case []int64:
		copy(out, x)
	case []uint64:
		for i, e := range x {
			if e > math.MaxInt64 {
				return nil, false
			}
			out[i] = int64(e)
		}
	default:
		return nil, false
	}
	return out, true
}

func asUint(v Value) (uint64, bool) {
	switch x := v.(type) {
	case uint8:
		return uint64(x), true
	case uint16:
		return uint64(x), true
	case uint32:
		return uint64(x), true
	case uint64:
		return x, true
	case int8:
		return uint64(x), x >= 0
	case int16:
		return uint64(x), x >= 0
	case int32:
		return uint64(x), x >= 0
	case int64:
		return uint64(x), x >= 0
	}
	return 0, false
}

// Architecture is general.architecture ("llama", "qwen2", …).
func (h *Header) Architecture() string {
	s, _ := h.String("general.architecture")
	return s
}

// Tensor returns the info of the named tensor.
func (h *Header) Tensor(name string) (*TensorInfo, bool) {
	i, ok := h.byName[name]
	if !ok {
		return nil, false
	}
	return &h.Tensors[i], true
}

// Keys lists the metadata keys, sorted.
func (h *Header) Keys() []string {
	keys := make([]string, len(h.KV))
	for i, kv := range h.KV {
		keys[i] = kv.Key
	}
	sort.Strings(keys)
	return keys
}

// File is an open, memory-mapped GGUF file.
type File struct {
	Path string
	*Header
	data  []byte
	unmap func() error
}

// Open maps path and parses its header.
func Open(path string) (*File, error) {
	data, unmap, err := mmap.File(path)
	if err != nil {
		return nil, fmt.Errorf("open gguf: %w", err)
	}
	h, err := ParseHeader(data, uint64(len(data)))
	if err != nil {
		_ = unmap()
		return nil, fmt.Errorf("open gguf %s: %w", path, err)
	}
	return &File{Path: path, Header: h, data: data, unmap: unmap}, nil
}

// Close unmaps the file; tensor data read from it must not be used afterwards.
func (f *File) Close() error {
	if f.unmap == nil {
		return nil
	}
	err := f.unmap()
	f.unmap, f.data = nil, nil
	return err
}

// Tensor is a tensor's info and its raw bytes in the mapping.
type Tensor struct {
	*TensorInfo
	Data []byte
}

// Tensor returns the named tensor; its Data points into the mapping.
func (f *File) Tensor(name string) (Tensor, error) {
	info, ok := f.Header.Tensor(name)
	if !ok {
		return Tensor{}, fmt.Errorf("%s: tensor %s: %w", f.Path, name, ErrNotFound)
	}
	start := f.DataOffset + info.Offset
	return Tensor{TensorInfo: info, Data: f.data[start : start+info.Size : start+info.Size]}, nil
}

// Float32 dequantizes the whole tensor.
func (t Tensor) Float32() ([]float32, error) {
	out := make([]float32, t.Elements())
	if err := Dequantize(t.Type, t.Data, out); err != nil {
		return nil, fmt.Errorf("tensor %s: %w", t.Name, err)
	}
	return out, nil
}

// ShapeString formats dims outermost first, as PyTorch would show the
// tensor ([out in] for a matrix).
func (t *TensorInfo) ShapeString() string {
	parts := make([]string, len(t.Dims))
	for i, d := range t.Dims {
		parts[len(t.Dims)-1-i] = fmt.Sprint(d)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// IsFile reports whether path is a regular file that starts with the GGUF
// magic.
func IsFile(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return false
	}
	var magic [4]byte
	_, err = io.ReadFull(f, magic[:])
	return err == nil && string(magic[:]) == Magic
}
