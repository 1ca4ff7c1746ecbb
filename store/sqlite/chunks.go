package sqlite

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
)

// Content-defined chunking of the large payload fields (0003_chunks.sql).
//
// A gear rolling hash picks cut points from the bytes themselves, so two
// fields that share a prefix (turn k's conversation and turn k+1's) are cut
// at the same places until they differ, and their common chunks are stored
// once. Chunks are immutable and never deleted, like the payloads they make
// up, so ids can be cached without invalidation.

const (
	// Small chunks dedup a growing conversation best: every turn re-stores
	// the chunk its previous version ended in, so the average chunk should
	// be near one turn's growth (a reply, a tool result). Measured on a
	// 10-turn session (TestChunkDedup): 10 KiB chunks stored 1.9× less than
	// the fields, 3 KiB 4.4×, 1.5 KiB 7.3×.
	chunkThreshold = 16 << 10 // fields shorter than this stay inline
	chunkMin       = 512
	chunkMax       = 8 << 10
	chunkMask      = 1<<10 - 1 // a cut on average every 1 KiB past chunkMin
)

// gearTable is the gear hash's byte table: fixed pseudo-random values
// (splitmix64 from a fixed seed), so cut points never change between
// versions of clawrl — a changed table would stop new chunks matching old.
var gearTable = func() (t [256]uint64) {
	x := uint64(0x636c617772_6c0001) // "clawrl" 0001
	for i := range t {
		x += 0x9e3779b97f4a7c15
		z := x
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		t[i] = z ^ (z >> 31)
	}
	return t
}()

// chunkCut returns the length of the first chunk of b.
func chunkCut(b []byte) int {
	if len(b) <= chunkMin {
		return len(b)
	}
	end := min(len(b), chunkMax)
	var h uint64
	for i := chunkMin; i < end; i++ {
		h = h<<1 + gearTable[b[i]]
		if h&chunkMask == 0 {
			return i + 1
		}
	}
	return end
}

// splitChunks cuts b into content-defined chunks (sub-slices of b).
func splitChunks(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		n := chunkCut(b)
		out = append(out, b[:n])
		b = b[n:]
	}
	return out
}

type chunkHash [16]byte

func hashChunk(b []byte) chunkHash {
	full := sha256.Sum256(b)
	return chunkHash(full[:16])
}

func encodeInt64s(v []int64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(x))
	}
	return b
}

func decodeInt64s(b []byte) ([]int64, error) {
	if len(b)%8 != 0 {
		return nil, fmt.Errorf("chunk list of %d bytes is not a multiple of 8", len(b))
	}
	v := make([]int64, len(b)/8)
	for i := range v {
		v[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return v, nil
}

// chunkIDs remembers the ids of chunks known to be committed, so the writer
// does not look each one up again on every turn of a session. It only ever
// holds committed ids: a rolled-back insert must not leave an id behind.
type chunkIDs struct {
	mu  sync.Mutex
	ids map[chunkHash]int64
}

// maxChunkIDs bounds the id cache (~100 bytes an entry); when full it starts
// over, which only costs lookups.
const maxChunkIDs = 1 << 20

func (c *chunkIDs) get(h chunkHash) (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id, ok := c.ids[h]
	return id, ok
}

func (c *chunkIDs) addAll(m map[chunkHash]int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ids == nil || len(c.ids)+len(m) > maxChunkIDs {
		c.ids = make(map[chunkHash]int64, len(m))
	}
	for h, id := range m {
		c.ids[h] = id
	}
}

// chunkWriter stores the chunks of one transaction's fields.
type chunkWriter struct {
	s    *Store
	tx   *sql.Tx
	seen map[chunkHash]int64 // ids this transaction used; cached after commit
}

// put stores b's chunks that are not stored yet and returns the encoded
// list of its chunk ids, or nil when b is short enough to stay inline.
func (w *chunkWriter) put(ctx context.Context, b []byte) ([]byte, error) {
	if len(b) < chunkThreshold || w.s.inlineOnly {
		return nil, nil
	}
	var ids []int64
	for _, c := range splitChunks(b) {
		h := hashChunk(c)
		id, ok := w.seen[h]
		if !ok {
			id, ok = w.s.chunkIDs.get(h)
		}
		if !ok {
			err := w.tx.StmtContext(ctx, w.s.stmts.chunkByHash).QueryRowContext(ctx, h[:]).Scan(&id)
			if errors.Is(err, sql.ErrNoRows) {
				res, err := w.tx.StmtContext(ctx, w.s.stmts.insertChunk).ExecContext(ctx, h[:], c)
				if err != nil {
					return nil, fmt.Errorf("store chunk: %w", err)
				}
				if id, err = res.LastInsertId(); err != nil {
					return nil, err
				}
			} else if err != nil {
				return nil, fmt.Errorf("look up chunk: %w", err)
			}
		}
		w.seen[h] = id
		ids = append(ids, id)
	}
	return encodeInt64s(ids), nil
}

// readChunks concatenates the chunks a payload field lists; what names the
// field in errors.
func (s *Store) readChunks(ctx context.Context, tx *sql.Tx, list []byte, what string) ([]byte, error) {
	ids, err := decodeInt64s(list)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	var out []byte
	for _, id := range ids {
		data, ok := s.chunks.get(id)
		if !ok {
			err := inTx(ctx, tx, s.stmts.chunkByID).QueryRowContext(ctx, id).Scan(&data)
			if errors.Is(err, sql.ErrNoRows) {
				return nil, fmt.Errorf("%s: chunk %d is missing", what, id)
			}
			if err != nil {
				return nil, fmt.Errorf("%s: read chunk %d: %w", what, id, err)
			}
			s.chunks.put(id, data, len(data))
		}
		out = append(out, data...)
	}
	return out, nil
}
