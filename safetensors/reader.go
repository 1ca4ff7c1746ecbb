package safetensors

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"unsafe"

	"github.com/clawrl/clawrl/internal/mmap"
)

// File is one open, memory-mapped safetensors file. Tensor data slices point
// into the mapping and stay valid until Close.
type File struct {
	Path   string
	Header *Header
	data   []byte // the whole file
	unmap  func() error
	byName map[string]int
}

// Open maps path and parses its header.
func Open(path string) (*File, error) {
	data, unmap, err := mmap.File(path)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	h, err := ParseHeader(data, int64(len(data)))
	if err != nil {
		_ = unmap()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	f := &File{Path: path, Header: h, data: data, unmap: unmap, byName: make(map[string]int, len(h.Tensors))}
	for i, t := range h.Tensors {
		f.byName[t.Name] = i
	}
	return f, nil
}

// Close unmaps the file; tensors read from it must not be used afterwards.
func (f *File) Close() error {
	if f.unmap == nil {
		return nil
	}
	err := f.unmap()
	f.unmap, f.data = nil, nil
	return err
}

// Names lists the tensor names, sorted.
func (f *File) Names() []string {
	names := make([]string, len(f.Header.Tensors))
	for i, t := range f.Header.Tensors {
		names[i] = t.Name
	}
	return names
}

// Tensor returns the named tensor, its Data pointing into the mapping.
func (f *File) Tensor(name string) (Tensor, error) {
	i, ok := f.byName[name]
	if !ok {
		return Tensor{}, fmt.Errorf("%s: tensor %s: %w", f.Path, name, ErrNotFound)
	}
	info := f.Header.Tensors[i]
	off := f.Header.DataOffset
	return Tensor{Name: name, DType: info.DType, Shape: info.Shape, Data: f.data[off+info.Begin : off+info.End : off+info.End], source: f.Path}, nil
}

// Tensor is a tensor's raw little-endian bytes with its dtype and shape.
type Tensor struct {
	Name   string
	DType  DType
	Shape  []int
	Data   []byte
	source string // the file it came from, for error messages
}

// NumElements is the product of the shape.
func (t Tensor) NumElements() int {
	n := 1
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// CheckShape returns an error naming the file and tensor when t's shape is
// not want.
func (t Tensor) CheckShape(want ...int) error {
	ok := len(t.Shape) == len(want)
	for i := 0; ok && i < len(want); i++ {
		ok = t.Shape[i] == want[i]
	}
	if !ok {
		return fmt.Errorf("load %s: tensor %s: shape %v, want %v", filepath.Base(t.source), t.Name, t.Shape, want)
	}
	return nil
}

// Float32 converts F32, BF16, F16 or F64 data to a new float32 slice.
func (t Tensor) Float32() ([]float32, error) {
	n := t.NumElements()
	out := make([]float32, n)
	if err := t.Float32Into(out); err != nil {
		return nil, err
	}
	return out, nil
}

// Float32Into converts into out, which must hold NumElements values.
func (t Tensor) Float32Into(out []float32) error {
	n := t.NumElements()
	if len(out) != n {
		return fmt.Errorf("load %s: tensor %s: %d elements, buffer holds %d", filepath.Base(t.source), t.Name, n, len(out))
	}
	b := t.Data
	switch t.DType {
	case F32:
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
	case BF16:
		for i := range out {
			out[i] = BF16ToFloat32(binary.LittleEndian.Uint16(b[2*i:]))
		}
	case F16:
		for i := range out {
			out[i] = F16ToFloat32(binary.LittleEndian.Uint16(b[2*i:]))
		}
	case F64:
		for i := range out {
			out[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:])))
		}
	default:
		return fmt.Errorf("load %s: tensor %s: dtype %s is not a float type", filepath.Base(t.source), t.Name, t.DType)
	}
	return nil
}

// BF16 returns the raw bfloat16 bits of a BF16 tensor without converting, so
// weights can stay half-size in memory. The slice aliases the mapping when
// the data is 2-byte aligned (it always is in files this package writes and
// in files written by the reference), and is a copy otherwise. Other float
// dtypes are converted (rounding to nearest even).
func (t Tensor) BF16() ([]uint16, error) {
	n := t.NumElements()
	if t.DType == BF16 {
		if n == 0 {
			return []uint16{}, nil
		}
		if uintptr(unsafe.Pointer(&t.Data[0]))%2 == 0 && nativeLittleEndian {
			return unsafe.Slice((*uint16)(unsafe.Pointer(&t.Data[0])), n), nil
		}
		out := make([]uint16, n)
		for i := range out {
			out[i] = binary.LittleEndian.Uint16(t.Data[2*i:])
		}
		return out, nil
	}
	f, err := t.Float32()
	if err != nil {
		return nil, err
	}
	out := make([]uint16, n)
	for i, v := range f {
		out[i] = Float32ToBF16(v)
	}
	return out, nil
}

var nativeLittleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// BF16ToFloat32 widens bfloat16 bits to float32 (exact).
func BF16ToFloat32(b uint16) float32 { return math.Float32frombits(uint32(b) << 16) }

// Float32ToBF16 rounds to the nearest bfloat16, ties to even, as torch does;
// NaN stays NaN.
func Float32ToBF16(f float32) uint16 {
	u := math.Float32bits(f)
	if u&0x7fffffff > 0x7f800000 {
		return uint16(u>>16) | 0x40 // quiet NaN
	}
	u += 0x7fff + (u>>16)&1
	return uint16(u >> 16)
}

// F16ToFloat32 widens IEEE half-precision bits to float32 (exact).
func F16ToFloat32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h) & 0x3ff
	switch {
	case exp == 0 && mant == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: normalise
		e := uint32(127 - 15 + 1)
		for mant&0x400 == 0 {
			mant <<= 1
			e--
		}
		mant &= 0x3ff
		return math.Float32frombits(sign | e<<23 | mant<<13)
	case exp == 0x1f:
		return math.Float32frombits(sign | 0xff<<23 | mant<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
}

// Checkpoint is a set of safetensors files read as one: a single
// model.safetensors, or the shards named by model.safetensors.index.json.
type Checkpoint struct {
	Dir    string
	Files  []*File
	byName map[string]*File
}

// indexFile is the layout of model.safetensors.index.json.
type indexFile struct {
	Metadata  map[string]any    `json:"metadata"`
	WeightMap map[string]string `json:"weight_map"`
}

// OpenDir opens the checkpoint in dir: model.safetensors.index.json when
// present (sharded), else model.safetensors, else every *.safetensors file.
func OpenDir(dir string) (*Checkpoint, error) {
	var paths []string
	idxPath := filepath.Join(dir, "model.safetensors.index.json")
	if raw, err := os.ReadFile(idxPath); err == nil {
		var idx indexFile
		if err := json.Unmarshal(raw, &idx); err != nil {
			return nil, fmt.Errorf("open %s: %w", idxPath, err)
		}
		seen := map[string]bool{}
		for _, shard := range idx.WeightMap {
			if shard != filepath.Base(shard) {
				return nil, fmt.Errorf("open %s: shard name %q is not a plain file name", idxPath, shard)
			}
			if !seen[shard] {
				seen[shard] = true
				paths = append(paths, filepath.Join(dir, shard))
			}
		}
		sort.Strings(paths)
	} else if single := filepath.Join(dir, "model.safetensors"); fileExists(single) {
		paths = []string{single}
	} else {
		paths, _ = filepath.Glob(filepath.Join(dir, "*.safetensors"))
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("open %s: no safetensors files", dir)
	}
	return OpenFiles(dir, paths...)
}

// OpenFiles opens the given files as one checkpoint. A tensor name held by
// two files is an error.
func OpenFiles(dir string, paths ...string) (*Checkpoint, error) {
	c := &Checkpoint{Dir: dir, byName: map[string]*File{}}
	for _, p := range paths {
		f, err := Open(p)
		if err != nil {
			_ = c.Close()
			return nil, err
		}
		c.Files = append(c.Files, f)
		for _, t := range f.Header.Tensors {
			if other, dup := c.byName[t.Name]; dup {
				_ = c.Close()
				return nil, fmt.Errorf("open %s: tensor %s is in both %s and %s", dir, t.Name, filepath.Base(other.Path), filepath.Base(p))
			}
			c.byName[t.Name] = f
		}
	}
	return c, nil
}

// Tensor returns the named tensor from whichever shard holds it.
func (c *Checkpoint) Tensor(name string) (Tensor, error) {
	f, ok := c.byName[name]
	if !ok {
		return Tensor{}, fmt.Errorf("load %s: tensor %s: %w", c.Dir, name, ErrNotFound)
	}
	return f.Tensor(name)
}

// Has reports whether some shard holds name.
func (c *Checkpoint) Has(name string) bool { _, ok := c.byName[name]; return ok }

// Names lists every tensor name, sorted.
func (c *Checkpoint) Names() []string {
	names := make([]string, 0, len(c.byName))
	for n := range c.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Close unmaps every shard.
func (c *Checkpoint) Close() error {
	var first error
	for _, f := range c.Files {
		if err := f.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}
