package sqlite

import (
	"bytes"
	"math"
	"slices"
	"testing"
)

func TestCodecRoundTrip(t *testing.T) {
	ids := []struct {
		name string
		in   []int32
	}{
		{"nil", nil},
		{"empty", []int32{}},
		{"extremes", []int32{0, 1, -1, math.MaxInt32, math.MinInt32, 151645}},
	}
	for _, c := range ids {
		got, err := decodeInt32s(encodeInt32s(c.in))
		if err != nil || !slices.Equal(got, c.in) || (got == nil) != (c.in == nil) {
			t.Errorf("int32 %s: round trip %v → %v, %v", c.name, c.in, got, err)
		}
	}
	lps := []struct {
		name string
		in   []float32
	}{
		{"nil", nil},
		{"empty", []float32{}},
		{"values", []float32{0, -0.5, -1e-30, float32(math.Inf(-1)), math.MaxFloat32, math.SmallestNonzeroFloat32}},
	}
	for _, c := range lps {
		got, err := decodeFloat32s(encodeFloat32s(c.in))
		if err != nil || !slices.Equal(got, c.in) || (got == nil) != (c.in == nil) {
			t.Errorf("float32 %s: round trip %v → %v, %v", c.name, c.in, got, err)
		}
	}
	// Little-endian on disk, whatever the host.
	if b := encodeInt32s([]int32{1, -2}); !bytes.Equal(b, []byte{1, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff}) {
		t.Errorf("encodeInt32s layout = % x", b)
	}
	if b := encodeFloat32s([]float32{1}); !bytes.Equal(b, []byte{0, 0, 0x80, 0x3f}) {
		t.Errorf("encodeFloat32s layout = % x", b)
	}
	for _, n := range []int{1, 2, 3, 5} {
		if _, err := decodeInt32s(make([]byte, n)); err == nil {
			t.Errorf("decodeInt32s accepted %d bytes", n)
		}
		if _, err := decodeFloat32s(make([]byte, n)); err == nil {
			t.Errorf("decodeFloat32s accepted %d bytes", n)
		}
	}
}

// FuzzDecodeBlobs feeds arbitrary bytes (a damaged or foreign database) to
// the blob decoders: they must reject or decode to values that encode back
// to the same bytes, never panic.
func FuzzDecodeBlobs(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 0, 0, 0})
	f.Add([]byte{0, 0, 0xc0, 0x7f, 1, 2})
	f.Add(encodeFloat32s([]float32{-0.5, float32(math.NaN())}))
	f.Fuzz(func(t *testing.T, b []byte) {
		ids, err := decodeInt32s(b)
		if err == nil && !bytes.Equal(encodeInt32s(ids), b) {
			t.Fatalf("int32 blob % x does not round-trip", b)
		}
		if (err == nil) != (len(b)%4 == 0) {
			t.Fatalf("decodeInt32s(% x): err %v", b, err)
		}
		if list, err := decodeInt64s(b); err == nil && !bytes.Equal(encodeInt64s(list), b) {
			t.Fatalf("chunk list % x does not round-trip", b)
		}
		lps, err := decodeFloat32s(b)
		if err == nil {
			back := encodeFloat32s(lps)
			if !bytes.Equal(back, b) {
				t.Fatalf("float32 blob % x does not round-trip (% x)", b, back)
			}
		}
	})
}
