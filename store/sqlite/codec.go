package sqlite

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Token ids and logprobs are stored as little-endian 4-byte blobs: an 8k-token
// prompt is 32 KiB instead of ~50 KiB of JSON, and decodes without parsing.
// A nil slice is stored as NULL and an empty one as an empty blob, so the two
// survive a round trip.

func encodeInt32s(v []int32) []byte {
	if v == nil {
		return nil
	}
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
	return b
}

func decodeInt32s(b []byte) ([]int32, error) {
	if b == nil {
		return nil, nil
	}
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("int32 blob of %d bytes is not a multiple of 4", len(b))
	}
	v := make([]int32, len(b)/4)
	for i := range v {
		v[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}

func encodeFloat32s(v []float32) []byte {
	if v == nil {
		return nil
	}
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func decodeFloat32s(b []byte) ([]float32, error) {
	if b == nil {
		return nil, nil
	}
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("float32 blob of %d bytes is not a multiple of 4", len(b))
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}
