package gguf

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const fixture = "testdata/dequant.gguf" // made by testdata/gen_dequant.py

func openFixture(t *testing.T) *File {
	t.Helper()
	f, err := Open(fixture)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestDequantizeMatchesGGUFPy compares each type's reference dequantization
// with the gguf Python package's, bit for bit.
func TestDequantizeMatchesGGUFPy(t *testing.T) {
	f := openFixture(t)
	for _, typ := range []Type{F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K} {
		t.Run(typ.String(), func(t *testing.T) {
			q, err := f.Tensor(typ.String())
			if err != nil {
				t.Fatal(err)
			}
			if q.Type != typ {
				t.Fatalf("tensor type %v, want %v", q.Type, typ)
			}
			want, err := f.Tensor(typ.String() + ".expect")
			if err != nil {
				t.Fatal(err)
			}
			got, err := q.Float32()
			if err != nil {
				t.Fatal(err)
			}
			exp, err := want.Float32()
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(exp) || len(got) != 4*512 {
				t.Fatalf("%d values, want %d", len(got), len(exp))
			}
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(exp[i]) {
					t.Fatalf("weight %d: %v (%#x), gguf-py %v (%#x)", i, got[i], math.Float32bits(got[i]), exp[i], math.Float32bits(exp[i]))
				}
			}
		})
	}
}

func TestMetadataValues(t *testing.T) {
	f := openFixture(t)
	if f.Version != 3 || f.Architecture() != "test" || f.Alignment != 32 {
		t.Fatalf("version %d, arch %q, alignment %d", f.Version, f.Architecture(), f.Alignment)
	}
	want := map[string]Value{
		"t.u8": uint8(200), "t.i8": int8(-100), "t.u16": uint16(60000), "t.i16": int16(-30000),
		"t.u32": uint32(4000000000), "t.i32": int32(-2000000000), "t.f32": float32(1.5),
		"t.u64": uint64(1<<63 + 5), "t.i64": int64(-(1 << 62)), "t.f64": -2.25, "t.bool": true,
		"t.str":        "héllo\nworld",
		"t.arr_str":    Array{TypeString, []string{"a", "", "ü"}},
		"t.arr_i32":    Array{TypeInt32, []int32{1, -2, 3}},
		"t.arr_f32":    Array{TypeFloat32, []float32{0.5, -1}},
		"t.arr_bool":   Array{TypeBool, []bool{true, false}},
		"t.arr_nested": Array{TypeArray, []Array{{TypeInt32, []int32{1, 2}}, {TypeInt32, []int32{3}}}},
	}
	for k, w := range want {
		got, ok := f.Get(k)
		if !ok || !reflect.DeepEqual(got, w) {
			t.Errorf("%s = %#v, want %#v", k, got, w)
		}
	}
	if n, ok := f.Uint("t.u32"); !ok || n != 4000000000 {
		t.Errorf("Uint(t.u32) = %d, %v", n, ok)
	}
	if _, ok := f.Uint("t.i8"); ok {
		t.Errorf("Uint of a negative value is ok")
	}
	if ints, ok := f.Ints("t.arr_i32"); !ok || !reflect.DeepEqual(ints, []int64{1, -2, 3}) {
		t.Errorf("Ints = %v, %v", ints, ok)
	}
	if s, ok := f.Strings("t.arr_str"); !ok || len(s) != 3 {
		t.Errorf("Strings = %v, %v", s, ok)
	}
}

// TestTypeTable checks the block layouts against the sizes ggml-common.h's
// structs imply.
func TestTypeTable(t *testing.T) {
	for typ, want := range map[Type][2]int{
		F32: {1, 4}, F16: {1, 2}, BF16: {1, 2}, Q4_0: {32, 18}, Q4_1: {32, 20}, Q5_0: {32, 22}, Q5_1: {32, 24},
		Q8_0: {32, 34}, Q2_K: {256, 84}, Q3_K: {256, 110}, Q4_K: {256, 144}, Q5_K: {256, 176}, Q6_K: {256, 210},
	} {
		info, ok := typ.Info()
		if !ok || info.BlockSize != want[0] || info.BlockBytes != want[1] || !typ.CanDequantize() {
			t.Errorf("%v: %+v, want block %d bytes %d", typ, info, want[0], want[1])
		}
	}
	if Q4_K.RowBytes(512) != 288 || Q4_K.RowBytes(100) != -1 || Type(99).RowBytes(32) != -1 {
		t.Error("RowBytes")
	}
	if IQ2_XXS.CanDequantize() {
		t.Error("IQ2_XXS claims dequantization")
	}
}

func TestDequantizeErrors(t *testing.T) {
	dst := make([]float32, 32)
	for _, tc := range []struct {
		typ  Type
		raw  int
		want string
	}{
		{Q4_1, 19, "need 20 bytes"},
		{Q4_K, 144, "not whole blocks"},
		{IQ2_XS, 74, "unsupported"},
		{Type(77), 1, "unsupported"},
	} {
		err := Dequantize(tc.typ, make([]byte, tc.raw), dst)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.typ, err, tc.want)
		}
	}
}

func TestHalfToFloat(t *testing.T) {
	for h, want := range map[uint16]float32{
		0x3c00: 1, 0xc000: -2, 0x0001: 5.9604645e-08, 0x8001: -5.9604645e-08, 0x03ff: 6.097555e-05,
		0x7bff: 65504, 0x7c00: float32(math.Inf(1)), 0xfc00: float32(math.Inf(-1)), 0x8000: float32(math.Copysign(0, -1)),
	} {
		if got := HalfToFloat(h); math.Float32bits(got) != math.Float32bits(want) {
			t.Errorf("HalfToFloat(%#04x) = %v, want %v", h, got, want)
		}
	}
	if !math.IsNaN(float64(HalfToFloat(0x7e00))) {
		t.Error("NaN")
	}
}

// TestCorruptFiles cuts and damages the fixture: every variant is an error
// naming what was wrong, never a panic.
func TestCorruptFiles(t *testing.T) {
	data, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	h, err := ParseHeader(data, uint64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 3, 4, 7, 8, 20, 24, 100, 1000, int(h.DataOffset) - 1, int(h.DataOffset), len(data) - 1} {
		_, err := ParseHeader(data[:n], uint64(n))
		if err == nil {
			t.Errorf("cut at %d of %d: no error", n, len(data))
		}
	}
	patch := func(off int, b ...byte) []byte {
		d := append([]byte(nil), data...)
		copy(d[off:], b)
		return d
	}
	for name, tc := range map[string]struct {
		data []byte
		want error
		msg  string
	}{
		"magic":      {patch(0, 'G', 'G', 'M', 'L'), ErrNotGGUF, "magic"},
		"version 1":  {patch(4, 1, 0, 0, 0), ErrUnsupported, "version 1"},
		"version 9":  {patch(4, 9, 0, 0, 0), ErrUnsupported, "version 9"},
		"big-endian": {patch(4, 0, 0, 0, 3), ErrUnsupported, "big-endian"},
		"counts":     {patch(8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f), ErrTruncated, "more than"},
	} {
		_, err := ParseHeader(tc.data, uint64(len(tc.data)))
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want %v mentioning %q", name, err, tc.want, tc.msg)
		}
	}
	// A truncated file on disk names the file and the tensor cut short.
	path := filepath.Join(t.TempDir(), "cut.gguf")
	if err := os.WriteFile(path, data[:len(data)-10], 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Open(path)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "tensor F32") {
		t.Errorf("truncated file: %v", err)
	}
}

func FuzzParseHeader(f *testing.F) {
	data, err := os.ReadFile(fixture)
	if err != nil {
		f.Fatal(err)
	}
	h, err := ParseHeader(data, uint64(len(data)))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data[:h.DataOffset])
	f.Add(data[:200])
	f.Add([]byte("GGUF\x03\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := ParseHeader(b, uint64(len(b))+1<<20)
		if err != nil {
			return
		}
		for _, kv := range h.KV {
			if v, ok := kv.Value.(Array); ok {
				_ = v.Len()
			}
		}
		for i := range h.Tensors {
			ti := &h.Tensors[i]
			if ti.Offset+ti.Size > 1<<20+uint64(len(b)) {
				t.Fatalf("tensor %s past the end", ti.Name)
			}
		}
	})
}
