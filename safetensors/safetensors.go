// Package safetensors reads and writes the safetensors format: an 8-byte
// little-endian header length, a JSON header mapping tensor names to dtype,
// shape and byte offsets (plus an optional "__metadata__" string map), then
// the raw little-endian tensor bytes.
//
// Files are memory-mapped, so opening a multi-gigabyte checkpoint costs no
// copies until a tensor is converted. Sharded checkpoints (several files tied
// together by model.safetensors.index.json) open as one Checkpoint.
package safetensors

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
)

// DType is a safetensors element type, spelled as in the header.
type DType string

// The element types this package knows the size of.
const (
	F64  DType = "F64"
	F32  DType = "F32"
	F16  DType = "F16"
	BF16 DType = "BF16"
	I64  DType = "I64"
	I32  DType = "I32"
	I16  DType = "I16"
	I8   DType = "I8"
	U8   DType = "U8"
	BOOL DType = "BOOL"
)

// Size is the element size in bytes, or 0 for an unknown dtype.
func (d DType) Size() int {
	switch d {
	case F64, I64:
		return 8
	case F32, I32:
		return 4
	case F16, BF16, I16:
		return 2
	case I8, U8, BOOL:
		return 1
	}
	return 0
}

// maxHeaderSize bounds the JSON header like the reference implementation
// (100 MB), so a corrupt length cannot make us allocate gigabytes.
const maxHeaderSize = 100 << 20

// TensorInfo is one header entry.
type TensorInfo struct {
	Name  string
	DType DType
	Shape []int
	// Begin and End are byte offsets into the data section.
	Begin, End int64
}

// NumElements is the product of the shape (1 for a scalar).
func (t TensorInfo) NumElements() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= int64(d)
	}
	return n
}

// Header is a parsed safetensors header.
type Header struct {
	Metadata map[string]string
	// Tensors are sorted by name.
	Tensors []TensorInfo
	// DataOffset is where the data section starts in the file (8 + header length).
	DataOffset int64
}

type headerEntry struct {
	DType       DType   `json:"dtype"`
	Shape       []int   `json:"shape"`
	DataOffsets []int64 `json:"data_offsets"`
}

// ParseHeader parses the header at the start of b, where b holds at least the
// 8-byte length and the JSON, and fileSize is the whole file's length (the
// data section is what follows the header), used to check the offsets. It checks
// everything the reference implementation checks: known dtypes, offsets that
// match shape×size, that tile the data section without gaps or overlap.
func ParseHeader(b []byte, fileSize int64) (*Header, error) {
	if len(b) < 8 {
		return nil, fmt.Errorf("header: file too short (%d bytes)", len(b))
	}
	n := binary.LittleEndian.Uint64(b[:8])
	if n > maxHeaderSize {
		return nil, fmt.Errorf("header: length %d exceeds %d", n, maxHeaderSize)
	}
	if int64(n) > fileSize-8 || uint64(len(b)-8) < n {
		return nil, fmt.Errorf("header: length %d runs past the end of the file", n)
	}
	raw := b[8 : 8+n]
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	h := &Header{DataOffset: 8 + int64(n)}
	dataSize := fileSize - h.DataOffset
	for name, msg := range entries {
		if name == "__metadata__" {
			if err := json.Unmarshal(msg, &h.Metadata); err != nil {
				return nil, fmt.Errorf("header: __metadata__: %w", err)
			}
			continue
		}
		var e headerEntry
		if err := json.Unmarshal(msg, &e); err != nil {
			return nil, fmt.Errorf("header: tensor %s: %w", name, err)
		}
		info, err := checkEntry(name, e, dataSize)
		if err != nil {
			return nil, fmt.Errorf("header: tensor %s: %w", name, err)
		}
		h.Tensors = append(h.Tensors, info)
	}
	sort.Slice(h.Tensors, func(i, j int) bool { return h.Tensors[i].Name < h.Tensors[j].Name })
	if err := checkTiling(h.Tensors, dataSize); err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	return h, nil
}

func checkEntry(name string, e headerEntry, dataSize int64) (TensorInfo, error) {
	info := TensorInfo{Name: name, DType: e.DType, Shape: e.Shape}
	size := e.DType.Size()
	if size == 0 {
		return info, fmt.Errorf("unknown dtype %q", e.DType)
	}
	if len(e.DataOffsets) != 2 {
		return info, fmt.Errorf("data_offsets has %d entries, want 2", len(e.DataOffsets))
	}
	info.Begin, info.End = e.DataOffsets[0], e.DataOffsets[1]
	if info.Begin < 0 || info.End < info.Begin || info.End > dataSize {
		return info, fmt.Errorf("data_offsets [%d %d] outside the data section of %d bytes", info.Begin, info.End, dataSize)
	}
	elems := int64(1)
	for _, d := range e.Shape {
		if d < 0 {
			return info, fmt.Errorf("negative dimension in shape %v", e.Shape)
		}
		if d != 0 && elems > math.MaxInt64/int64(d) {
			return info, fmt.Errorf("shape %v overflows", e.Shape)
		}
		elems *= int64(d)
	}
	if elems > math.MaxInt64/int64(size) || elems*int64(size) != info.End-info.Begin {
		return info, fmt.Errorf("shape %v of %s needs %d bytes, data_offsets give %d", e.Shape, e.DType, elems*int64(size), info.End-info.Begin)
	}
	return info, nil
}

// checkTiling verifies that the tensors cover the data section exactly, as
// the reference reader does (it rejects gaps and overlaps).
func checkTiling(ts []TensorInfo, dataSize int64) error {
	byOffset := make([]TensorInfo, len(ts))
	copy(byOffset, ts)
	sort.SliceStable(byOffset, func(i, j int) bool {
		if byOffset[i].Begin != byOffset[j].Begin {
			return byOffset[i].Begin < byOffset[j].Begin
		}
		return byOffset[i].End < byOffset[j].End
	})
	var at int64
	for _, t := range byOffset {
		if t.Begin != at {
			return fmt.Errorf("tensor %s starts at byte %d, want %d (gap or overlap)", t.Name, t.Begin, at)
		}
		at = t.End
	}
	if at != dataSize {
		return fmt.Errorf("tensors end at byte %d but the data section has %d", at, dataSize)
	}
	return nil
}

// ErrNotFound is returned (wrapped) for a tensor name a file does not hold.
var ErrNotFound = errors.New("tensor not found")
