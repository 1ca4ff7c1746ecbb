package quant

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/clawrl/clawrl/internal/mmap"
)

// A matrix on a file mapping (SetOwner) gives its blocks' pages back after
// packing; they read back unchanged, so the packed and the one-row paths
// (and DequantizeRows) still agree with the copy in memory.
func TestPackedReleasesMappedBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	const rows, cols = 64, 1024
	for _, ty := range []Type{Q4_1, Q4_K, Q6_K} {
		heap := quantRows(ty, randRow(rng, rows*cols, 0.05), rows, cols)
		path := filepath.Join(t.TempDir(), "blocks")
		if err := os.WriteFile(path, heap.Data, 0o644); err != nil {
			t.Fatal(err)
		}
		data, unmap, err := mmap.File(path)
		if err != nil {
			t.Fatal(err)
		}
		m, err := NewMatrix(ty, rows, cols, data)
		if err != nil {
			t.Fatal(err)
		}
		m.SetOwner(path)
		const T = 3
		x := randRow(rng, T*cols, 1)
		got, want := make([]float32, T*rows), make([]float32, T*rows)
		MatMul(got, x, T, m) // packs, then releases the mapping's pages
		MatMul(want, x, T, heap)
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%v: mapped out[%d] = %v, heap %v", ty, i, got[i], want[i])
			}
		}
		wm, wh := make([]float32, rows*cols), make([]float32, rows*cols)
		m.DequantizeRows(wm, 0, rows)
		heap.DequantizeRows(wh, 0, rows)
		for i := range wh {
			if math.Float32bits(wm[i]) != math.Float32bits(wh[i]) {
				t.Fatalf("%v: mapped blocks changed after release at %d: %v, want %v", ty, i, wm[i], wh[i])
			}
		}
		if err := unmap(); err != nil {
			t.Fatal(err)
		}
	}
}
