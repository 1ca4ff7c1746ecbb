package safetensors

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
)

// NewTensor encodes float32 values as dtype (F32, BF16 or F16) into a Tensor
// ready for Write. BF16 and F16 round to nearest, ties to even.
func NewTensor(name string, dtype DType, shape []int, values []float32) (Tensor, error) {
	n := 1
	for _, d := range shape {
		n *= d
	}
	if n != len(values) {
		return Tensor{}, fmt.Errorf("tensor %s: shape %v needs %d values, got %d", name, shape, n, len(values))
	}
	var data []byte
	switch dtype {
	case F32:
		data = make([]byte, 4*n)
		for i, v := range values {
			binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(v))
		}
	case BF16:
		data = make([]byte, 2*n)
		for i, v := range values {
			binary.LittleEndian.PutUint16(data[2*i:], Float32ToBF16(v))
		}
	case F16:
		data = make([]byte, 2*n)
		for i, v := range values {
			binary.LittleEndian.PutUint16(data[2*i:], Float32ToF16(v))
		}
	default:
		return Tensor{}, fmt.Errorf("tensor %s: cannot encode float32 as %s", name, dtype)
	}
	return Tensor{Name: name, DType: dtype, Shape: append([]int(nil), shape...), Data: data}, nil
}

// Write writes tensors in the layout the reference implementation produces:
// tensors ordered by alignment (larger element size first) then name,
// "__metadata__" first in the header, and the header padded with spaces so
// the data section starts 8-byte aligned.
func Write(w io.Writer, tensors []Tensor, metadata map[string]string) error {
	order := make([]Tensor, len(tensors))
	copy(order, tensors)
	sort.SliceStable(order, func(i, j int) bool {
		si, sj := order[i].DType.Size(), order[j].DType.Size()
		if si != sj {
			return si > sj
		}
		return order[i].Name < order[j].Name
	})
	var hdr bytes.Buffer
	hdr.WriteByte('{')
	first := true
	sep := func() {
		if !first {
			hdr.WriteByte(',')
		}
		first = false
	}
	if len(metadata) > 0 {
		sep()
		hdr.WriteString(`"__metadata__":`)
		m, err := json.Marshal(metadata) // sorted keys
		if err != nil {
			return fmt.Errorf("write header metadata: %w", err)
		}
		hdr.Write(m)
	}
	var offset int64
	seen := map[string]bool{}
	for _, t := range order {
		if t.Name == "__metadata__" || seen[t.Name] {
			return fmt.Errorf("write tensor %s: duplicate or reserved name", t.Name)
		}
		seen[t.Name] = true
		if t.DType.Size() == 0 {
			return fmt.Errorf("write tensor %s: unknown dtype %q", t.Name, t.DType)
		}
		if want := t.NumElements() * t.DType.Size(); want != len(t.Data) {
			return fmt.Errorf("write tensor %s: shape %v of %s needs %d bytes, have %d", t.Name, t.Shape, t.DType, want, len(t.Data))
		}
		name, _ := json.Marshal(t.Name)
		shape := t.Shape
		if shape == nil {
			shape = []int{}
		}
		entry, _ := json.Marshal(headerEntry{DType: t.DType, Shape: shape, DataOffsets: []int64{offset, offset + int64(len(t.Data))}})
		sep()
		hdr.Write(name)
		hdr.WriteByte(':')
		hdr.Write(entry)
		offset += int64(len(t.Data))
	}
	hdr.WriteByte('}')
	for hdr.Len()%8 != 0 {
		hdr.WriteByte(' ')
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	var lenBuf [8]byte
	binary.LittleEndian.PutUint64(lenBuf[:], uint64(hdr.Len()))
	bw.Write(lenBuf[:])
	bw.Write(hdr.Bytes())
	for _, t := range order {
		bw.Write(t.Data)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write safetensors: %w", err)
	}
	return nil
}

// WriteFile writes tensors to path atomically (a temporary file renamed into
// place), so a reader never sees half a checkpoint.
func WriteFile(path string, tensors []Tensor, metadata map[string]string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := Write(tmp, tensors, metadata); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	// CreateTemp makes the file 0600; checkpoints are meant to be shared.
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Float32ToF16 rounds to the nearest IEEE half, ties to even, overflowing to
// infinity like torch's conversion.
func Float32ToF16(f float32) uint16 {
	u := math.Float32bits(f)
	sign := uint16(u>>16) & 0x8000
	exp := int32(u>>23&0xff) - 127 + 15
	mant := u & 0x7fffff
	if u&0x7fffffff > 0x7f800000 {
		return sign | 0x7e00
	}
	if u&0x7fffffff == 0x7f800000 {
		return sign | 0x7c00
	}
	if exp >= 0x1f {
		return sign | 0x7c00
	}
	if exp <= 0 {
		if exp < -10 {
			return sign
		}
		mant |= 0x800000
		shift := uint32(14 - exp)
		half := uint32(1) << (shift - 1)
		rest := mant & (1<<shift - 1)
		m := mant >> shift
		if rest > half || (rest == half && m&1 == 1) {
			m++
		}
		return sign | uint16(m)
	}
	m := mant >> 13
	rest := mant & 0x1fff
	h := uint32(exp)<<10 | m
	if rest > 0x1000 || (rest == 0x1000 && m&1 == 1) {
		h++ // may carry into the exponent, which is the right rounding
	}
	return sign | uint16(h)
}
