package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func writeTemp(t *testing.T, tensors []Tensor, meta map[string]string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "model.safetensors")
	if err := WriteFile(p, tensors, meta); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustTensor(t *testing.T, name string, dt DType, shape []int, v []float32) Tensor {
	t.Helper()
	x, err := NewTensor(name, dt, shape, v)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func TestRoundTrip(t *testing.T) {
	vals := []float32{0, 1, -2.5, 3.140625, 1e-3, -65504, 1e-7, float32(math.Inf(1))}
	tests := []struct {
		dtype DType
		tol   float64
	}{{F32, 0}, {BF16, 1.0 / 128}, {F16, 1.0 / 1024}}
	for _, tc := range tests {
		t.Run(string(tc.dtype), func(t *testing.T) {
			p := writeTemp(t, []Tensor{
				mustTensor(t, "b.weight", tc.dtype, []int{2, 4}, vals),
				mustTensor(t, "a.bias", F32, []int{3}, []float32{1, 2, 3}),
				mustTensor(t, "scalar", F32, []int{}, []float32{7}),
				mustTensor(t, "empty", F32, []int{0, 5}, nil),
			}, map[string]string{"format": "pt"})
			f, err := Open(p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if f.Header.DataOffset%8 != 0 {
				t.Errorf("data offset %d not 8-aligned", f.Header.DataOffset)
			}
			if got := f.Header.Metadata["format"]; got != "pt" {
				t.Errorf("metadata format = %q", got)
			}
			if got := strings.Join(f.Names(), ","); got != "a.bias,b.weight,empty,scalar" {
				t.Errorf("names = %s", got)
			}
			x, err := f.Tensor("b.weight")
			if err != nil {
				t.Fatal(err)
			}
			got, err := x.Float32()
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range vals {
				if math.IsInf(float64(want), 0) {
					if got[i] != want {
						t.Errorf("[%d] = %v, want %v", i, got[i], want)
					}
					continue
				}
				if d := math.Abs(float64(got[i] - want)); d > tc.tol*math.Max(1, math.Abs(float64(want))) {
					t.Errorf("[%d] = %v, want %v", i, got[i], want)
				}
			}
			if s, _ := f.Tensor("scalar"); s.NumElements() != 1 {
				t.Errorf("scalar has %d elements", s.NumElements())
			}
		})
	}
}

func TestBF16Raw(t *testing.T) {
	p := writeTemp(t, []Tensor{mustTensor(t, "w", BF16, []int{3}, []float32{1, -2, 0.5})}, nil)
	f, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	x, _ := f.Tensor("w")
	raw, err := x.BF16()
	if err != nil {
		t.Fatal(err)
	}
	want := []uint16{0x3f80, 0xc000, 0x3f00}
	for i := range want {
		if raw[i] != want[i] {
			t.Errorf("raw[%d] = %#x, want %#x", i, raw[i], want[i])
		}
	}
}

func TestCheckShapeError(t *testing.T) {
	p := writeTemp(t, []Tensor{mustTensor(t, "model.layers.3.mlp.up_proj.weight", F32, []int{2, 3}, make([]float32, 6))}, nil)
	c, err := OpenDir(filepath.Dir(p))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	x, err := c.Tensor("model.layers.3.mlp.up_proj.weight")
	if err != nil {
		t.Fatal(err)
	}
	err = x.CheckShape(3, 2)
	want := "load model.safetensors: tensor model.layers.3.mlp.up_proj.weight: shape [2 3], want [3 2]"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
	if _, err := c.Tensor("nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing tensor: err = %v", err)
	}
}

func TestSharded(t *testing.T) {
	dir := t.TempDir()
	if err := WriteFile(filepath.Join(dir, "model-00001-of-00002.safetensors"), []Tensor{mustTensor(t, "a", F32, []int{1}, []float32{1})}, nil); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(filepath.Join(dir, "model-00002-of-00002.safetensors"), []Tensor{mustTensor(t, "b", BF16, []int{1}, []float32{2})}, nil); err != nil {
		t.Fatal(err)
	}
	idx, _ := json.Marshal(map[string]any{"metadata": map[string]any{"total_size": 6}, "weight_map": map[string]string{
		"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}})
	if err := os.WriteFile(filepath.Join(dir, "model.safetensors.index.json"), idx, 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for name, want := range map[string]float32{"a": 1, "b": 2} {
		x, err := c.Tensor(name)
		if err != nil {
			t.Fatal(err)
		}
		v, _ := x.Float32()
		if v[0] != want {
			t.Errorf("%s = %v, want %v", name, v[0], want)
		}
	}
}

func TestParseHeaderRejects(t *testing.T) {
	mk := func(hdr string, data int) []byte {
		b := make([]byte, 8, 8+len(hdr)+data)
		binary.LittleEndian.PutUint64(b, uint64(len(hdr)))
		b = append(b, hdr...)
		return append(b, make([]byte, data)...)
	}
	tests := []struct {
		name, hdr string
		data      int
		want      string
	}{
		{"bad json", `{`, 0, "header"},
		{"unknown dtype", `{"x":{"dtype":"Q4","shape":[1],"data_offsets":[0,4]}}`, 4, "unknown dtype"},
		{"size mismatch", `{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}`, 4, "needs 8 bytes"},
		{"past end", `{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, 4, "outside the data section"},
		{"gap", `{"x":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, 8, "gap or overlap"},
		{"overlap", `{"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"y":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, 4, "gap or overlap"},
		{"trailing", `{"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, 8, "data section has 8"},
		{"negative", `{"x":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}`, 4, "negative"},
		{"bad metadata", `{"__metadata__":{"a":1}}`, 0, "__metadata__"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := mk(tc.hdr, tc.data)
			_, err := ParseHeader(b, int64(len(b)))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
	huge := make([]byte, 16)
	binary.LittleEndian.PutUint64(huge, 1<<40)
	if _, err := ParseHeader(huge, 16); err == nil {
		t.Error("huge header length accepted")
	}
}

func FuzzParseHeader(f *testing.F) {
	var buf bytes.Buffer
	x, _ := NewTensor("w", BF16, []int{2, 2}, []float32{1, 2, 3, 4})
	y, _ := NewTensor("b", F32, []int{2}, []float32{1, 2})
	if err := Write(&buf, []Tensor{x, y}, map[string]string{"format": "pt"}); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte{2, 0, 0, 0, 0, 0, 0, 0, '{', '}'})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := ParseHeader(b, int64(len(b)))
		if err != nil {
			return
		}
		// Whatever parses must be safe to slice.
		for _, ti := range h.Tensors {
			_ = b[h.DataOffset+ti.Begin : h.DataOffset+ti.End]
			if ti.NumElements()*int64(ti.DType.Size()) != ti.End-ti.Begin {
				t.Fatalf("tensor %s: size mismatch accepted", ti.Name)
			}
		}
	})
}

func TestF16Exhaustive(t *testing.T) {
	// Every finite half converts to float32 and back to itself.
	for h := 0; h < 1<<16; h++ {
		f := F16ToFloat32(uint16(h))
		if math.IsNaN(float64(f)) {
			continue
		}
		if back := Float32ToF16(f); back != uint16(h) {
			t.Fatalf("%#04x -> %v -> %#04x", h, f, back)
		}
	}
	for b := 0; b < 1<<16; b++ {
		f := BF16ToFloat32(uint16(b))
		if math.IsNaN(float64(f)) {
			continue
		}
		if back := Float32ToBF16(f); back != uint16(b) {
			t.Fatalf("bf16 %#04x -> %v -> %#04x", b, f, back)
		}
	}
}

// python returns the reference interpreter with the given modules, or skips
// (fails under CLAWRL_REQUIRE_REFS=1) when it or a module is missing.
func python(t *testing.T, modules ...string) string {
	t.Helper()
	py := os.Getenv("CLAWRL_PYTHON")
	if py == "" {
		py = "python3"
	}
	args := []string{"-c", "import " + strings.Join(modules, ", ")}
	if out, err := exec.Command(py, args...).CombinedOutput(); err != nil {
		msg := "reference python " + py + " with " + strings.Join(modules, ", ") + " unavailable: " + strings.TrimSpace(string(out))
		if os.Getenv("CLAWRL_REQUIRE_REFS") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return py
}

// TestPythonInterop checks that files we write load in the reference
// safetensors (numpy backend) with the same values, that files it writes load
// here, and that for the same tensors the bytes are identical.
func TestPythonInterop(t *testing.T) {
	py := python(t, "safetensors", "numpy")
	dir := t.TempDir()
	ours := filepath.Join(dir, "ours.safetensors")
	theirs := filepath.Join(dir, "theirs.safetensors")
	vals := make([]float32, 24)
	for i := range vals {
		vals[i] = float32(i)*0.37 - 4
	}
	tensors := []Tensor{
		mustTensor(t, "layer.weight", F32, []int{4, 6}, vals),
		mustTensor(t, "layer.half", F16, []int{2, 12}, vals),
		mustTensor(t, "a.bias", F32, []int{3}, vals[:3]),
	}
	if err := WriteFile(ours, tensors, map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	script := `
import sys, numpy as np
from safetensors.numpy import load_file, save_file
ours, theirs = sys.argv[1], sys.argv[2]
d = load_file(ours)
vals = (np.arange(24, dtype=np.float32) * np.float32(0.37) - np.float32(4))
assert d["layer.weight"].dtype == np.float32 and d["layer.weight"].shape == (4, 6), d["layer.weight"].shape
assert np.array_equal(d["layer.weight"].ravel(), vals)
assert np.array_equal(d["layer.half"].ravel(), vals.astype(np.float16))
assert np.array_equal(d["a.bias"], vals[:3])
save_file({"layer.weight": vals.reshape(4, 6), "layer.half": vals.astype(np.float16).reshape(2, 12), "a.bias": vals[:3]}, theirs, metadata={"format": "pt"})
`
	if out, err := exec.Command(py, "-c", script, ours, theirs).CombinedOutput(); err != nil {
		t.Fatalf("python: %v\n%s", err, out)
	}
	f, err := Open(theirs)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	x, _ := f.Tensor("layer.weight")
	got, _ := x.Float32()
	for i := range vals {
		if got[i] != vals[i] {
			t.Fatalf("theirs layer.weight[%d] = %v, want %v", i, got[i], vals[i])
		}
	}
	a, _ := os.ReadFile(ours)
	b, _ := os.ReadFile(theirs)
	if !bytes.Equal(a, b) {
		t.Errorf("bytes differ from the reference writer:\nours   %q\ntheirs %q", a[:min(len(a), 300)], b[:min(len(b), 300)])
	}
}
