package quant

import (
	"sync"

	"github.com/clawrl/clawrl/blas"
)

//go:generate go run amxk_gen.go

// Q4_K and Q6_K on AMX-INT8 tiles (amxk_amd64.s; its generator
// amxk_gen.go says how the sums are formed). Where the CPU has them,
// packedGroups runs pairs of packed groups (sixteen rows) against tiles of
// sixteen tokens on them: a kernel's prep widens a pair's super-blocks
// into the tiles' weight operands (each value times its scale, as two
// bytes), then its gemm runs tiles of tokens over them. The integer sum
// of a super-block is exact on either path and the float steps are the
// VNNI kernels', so the outputs are bitwise those of gemv8 and gemv8x4.

// amxKernel is one block type's pair of tile kernels and the bytes its
// prep writes per super-block (amxk_gen.go's prepBytes, q6PrepBytes).
type amxKernel struct {
	prep      func(nb int, w *byte, gstride int, dst *byte)
	gemm      func(tiles int, prep *byte, qs *int8, ldq int, ds *float32, ldd int, sums *int16, lds int, out *float32, ldo int, ctmp *byte, cfg *byte)
	prepBytes int
}

// amxKernels are the block types with tile kernels.
var amxKernels = map[Type]amxKernel{
	Q4_K: {prepQ4KAMX, gemmQ4KAMX, amxMaxPrep},
	Q6_K: {prepQ6KAMX, gemmQ6KAMX, 8256},
}

// amxMaxPrep is the largest prepared super-block (Q4_K's).
const amxMaxPrep = 8576

// amxTokens is how many tokens one tile takes.
const amxTokens = 16

// amxTailMin is the fewest tokens past the last full tile that run on the
// tiles as one more, zero-padded, tile; fewer run on the VNNI kernels. A
// tile costs about what seven tokens do there (BenchmarkAMX).
const amxTailMin = 8

// amxTailed reports whether a batch of T tokens runs its last tokens on a
// padded tile.
func amxTailed(T int) bool { return T >= amxTokens && T%amxTokens >= amxTailMin }

// amxTail is an Act's last T mod 16 tokens padded with zeros to a tile:
// their values, d per super-block and int16 sums of 32.
type amxTail struct {
	qs   []int8
	ds   []float32
	sums []int16
}

// fillTiles fills what the tile kernels read beside the values: sums32h
// and, where the batch's last tokens run on a padded tile, a.tail
// (prepare, for batches of amxTokens and more).
func (a *Act) fillTiles() {
	a.sums32h = grow(a.sums32h, a.T*a.Cols/32)
	for i := range a.sums32h {
		a.sums32h[i] = a.bsums[2*i] + a.bsums[2*i+1]
	}
	if !amxTailed(a.T) {
		return
	}
	t0, nb, n32 := a.T/amxTokens*amxTokens, a.Cols/QKK, a.Cols/32
	tl := &a.tail
	tl.qs = grow(tl.qs, amxTokens*a.Cols)
	tl.ds = grow(tl.ds, amxTokens*nb)
	tl.sums = grow(tl.sums, amxTokens*n32)
	clear(tl.qs[copy(tl.qs, a.qs[t0*a.Cols:a.T*a.Cols]):])
	clear(tl.ds[copy(tl.ds, a.ds[t0*nb:a.T*nb]):])
	clear(tl.sums[copy(tl.sums, a.sums32h[t0*n32:a.T*n32]):])
}

// amxBlock is how many tokens (a multiple of amxTokens) pass all of a
// set of pairs' super-blocks before the next ones: their outputs are summed
// in amxScratch.out and written once, a run of 16 per pair per token, as
// the VNNI kernels write theirs. Summing into the outputs themselves, a row
// of the output per token, missed the TLB on every token of a training
// forward's batch (3,040 rows 36 KB apart for a gate projection).
const amxBlock = 128

// amxMaxPairs is the most pairs of groups one pass prepares (their runs
// of outputs are written side by side: fewer pages touched per token);
// amxPrepBudget caps the bytes their prepared super-blocks take (L2).
const (
	amxMaxPairs   = 8
	amxPrepBudget = 1536 << 10
)

// amxPairs is how many pairs of groups of a matrix of nb super-blocks per
// row one pass takes.
func amxPairs(nb int) int { return max(1, min(amxMaxPairs, amxPrepBudget/(nb*amxMaxPrep))) }

// amxScratch is one worker's prepared super-blocks, its C rows, and the
// outputs of one block of tokens and of the padded tile.
type amxScratch struct {
	prep    []byte
	ctmp    [2 * 16 * 64]byte
	out     [amxBlock * 2 * packRows * amxMaxPairs]float32
	tailOut [amxTokens * 2 * packRows * amxMaxPairs]float32
}

var amxPool = sync.Pool{New: func() any { return new(amxScratch) }}

// amxTiles is tiles of tokens whose first values, d and int16 sums of
// 32 are qs, ds and sums (Q4_K's kernel reads the sums), laid out per
// token as in an Act; their outputs are summed into o, pair p's 16 at 16p
// of each token's run.
type amxTiles struct {
	tiles int
	qs    []int8
	ds    []float32
	sums  []int16
	o     []float32
}

// amxPairsRun computes on k's kernels tokens [0, T16) (a multiple of
// amxTokens), and with tail the rest of a's tokens on the padded tile, of
// np pairs of groups from g of pk into out[t·ldo + r − c0];
// a.prepare(m.Type) came first. When all the tiles fit one block, each
// super-block is prepared just before they pass it (its 8.5 KB stay in
// L1); otherwise the pairs' super-blocks are prepared once (in L2) and each
// block of tokens passes them all.
func amxPairsRun(k *amxKernel, out []float32, ldo, c0 int, a *Act, T16 int, tail bool, m *Matrix, pk []byte, g, np int, s *amxScratch) {
	nb, bb, pb := m.Cols/QKK, packedBlockBytes(m.Type), k.prepBytes
	w := pk[g*nb*bb:]
	pair := 2 * nb * bb // bytes from one pair's groups to the next's
	n32, col, width := m.Cols/32, g*packRows-c0, 2*packRows*np
	tokens := func(t0, t1 int, o []float32) amxTiles {
		return amxTiles{(t1 - t0) / amxTokens, a.qs[t0*m.Cols:], a.ds[t0*nb:], a.sums32h[t0*n32:], o[:(t1-t0)*width]}
	}
	// run passes xs over prepared super-block b of pair p at prep.
	run := func(xs []amxTiles, b, p int, prep *byte) {
		for _, x := range xs {
			k.gemm(x.tiles, prep, &x.qs[b*QKK], m.Cols, &x.ds[b], 4*nb, &x.sums[b*8], 2*n32, &x.o[2*packRows*p], 4*width, &s.ctmp[0], &blas.AMXTileConfig[0])
		}
	}
	var last []amxTiles // the padded tile, run beside the last block
	if tail {
		last = []amxTiles{{1, a.tail.qs, a.tail.ds, a.tail.sums, s.tailOut[:amxTokens*width]}}
		clear(last[0].o)
	}
	emit := func(t0, t1 int, o []float32) {
		for t := t0; t < t1; t++ {
			copy(out[t*ldo+col:][:width], o[(t-t0)*width:])
		}
	}
	if T16 <= amxBlock {
		xs := last
		if T16 > 0 {
			xs = append(xs, tokens(0, T16, s.out[:]))
			clear(xs[len(xs)-1].o)
		}
		s.prep = grow(s.prep, pb)
		for b := 0; b < nb; b++ {
			for p := 0; p < np; p++ {
				k.prep(1, &w[p*pair+b*bb], nb*bb, &s.prep[0])
				run(xs, b, p, &s.prep[0])
			}
		}
		emit(0, T16, s.out[:])
	} else {
		s.prep = grow(s.prep, np*nb*pb)
		for p := 0; p < np; p++ {
			k.prep(nb, &w[p*pair], nb*bb, &s.prep[p*nb*pb])
		}
		for t0 := 0; t0 < T16; t0 += amxBlock {
			t1 := min(t0+amxBlock, T16)
			xs := []amxTiles{tokens(t0, t1, s.out[:])}
			clear(xs[0].o)
			if t1 == T16 {
				xs = append(xs, last...)
			}
			for b := 0; b < nb; b++ {
				for p := 0; p < np; p++ {
					run(xs, b, p, &s.prep[(p*nb+b)*pb])
				}
			}
			emit(t0, t1, s.out[:])
		}
	}
	if tail {
		emit(T16, a.T, s.tailOut[:])
	}
}
