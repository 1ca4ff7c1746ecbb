package sqlite

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/store"
)

func randomBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// words is n pseudo-random words: text with the statistics of a prompt.
func words(seed uint64, n int) string {
	vocab := strings.Fields("the agent reads a file and writes tests for every function it changes then runs them " +
		"before it commits; when a tool fails it reports the error with the input that caused it and tries again")
	r := rand.New(rand.NewPCG(seed, 2))
	var b strings.Builder
	for range n {
		b.WriteString(vocab[r.IntN(len(vocab))])
		b.WriteByte(' ')
	}
	return b.String()
}

func checkChunks(t *testing.T, b []byte, chunks [][]byte) {
	t.Helper()
	if got := bytes.Join(chunks, nil); !bytes.Equal(got, b) {
		t.Fatalf("chunks of %d bytes join to %d different bytes", len(b), len(got))
	}
	for i, c := range chunks {
		if len(c) > chunkMax || len(c) == 0 || (i < len(chunks)-1 && len(c) <= chunkMin) {
			t.Fatalf("chunk %d of %d has %d bytes (min %d, max %d)", i, len(chunks), len(c), chunkMin, chunkMax)
		}
	}
}

func TestSplitChunks(t *testing.T) {
	cases := []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"tiny", []byte("hello")},
		{"random 1 MiB", randomBytes(1, 1<<20)},
		{"zeros 200 KiB", make([]byte, 200<<10)}, // no cut point: max-size chunks
		{"text", []byte(strings.Repeat("You are a careful agent. ", 5000))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkChunks(t, c.b, splitChunks(c.b)) })
	}
	// On random data a cut comes on average chunkMask+1 bytes past chunkMin.
	n := len(splitChunks(randomBytes(2, 4<<20)))
	want := chunkMin + chunkMask + 1
	if avg := (4 << 20) / n; avg < want*7/10 || avg > want*13/10 {
		t.Errorf("average chunk of random data = %d bytes, want about %d", avg, want)
	}
}

// TestChunksSharePrefixes is the property dedup rests on: a field that
// extends another (turn k+1's conversation extends turn k's) is cut at the
// same places up to the last cut inside the shared prefix.
func TestChunksSharePrefixes(t *testing.T) {
	base := randomBytes(3, 300<<10)
	for _, extra := range []int{1, 100, 5000, 100 << 10} {
		longer := append(append([]byte(nil), base...), randomBytes(4, extra)...)
		a, b := splitChunks(base), splitChunks(longer)
		shared := 0
		for shared < len(a) && shared < len(b) && bytes.Equal(a[shared], b[shared]) {
			shared++
		}
		if shared < len(a)-1 {
			t.Errorf("+%d bytes: only %d of %d chunks shared", extra, shared, len(a))
		}
	}
}

// TestChunkDedup records a growing session twice over: storage grows with
// the new content, not with the square of the session's length, and every
// turn reads back exactly, cache off, after a reopen.
func TestChunkDedup(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir).(*Store)
	system := chat.Message{Role: chat.RoleSystem, Content: words(5, 5000)} // ~30k characters
	var want []store.Turn
	var payloadBytes int
	for si := range 2 {
		sess := store.Session{Key: fmt.Sprintf("dedup%d", si)}
		if err := s.CreateSession(t.Context(), &sess); err != nil {
			t.Fatal(err)
		}
		msgs := []chat.Message{system}
		var ids []int32
		for k := range 10 {
			msgs = append(msgs, chat.Message{Role: chat.RoleUser, Content: words(uint64(100*si+k), 200)})
			var text strings.Builder
			for _, m := range msgs {
				text.WriteString("<|im_start|>" + m.Role + "\n" + m.Content + "<|im_end|>\n")
			}
			r := rand.New(rand.NewPCG(uint64(si), uint64(k)))
			for len(ids) < 4*text.Len()/3/4 { // ~4 characters a token
				ids = append(ids, int32(r.IntN(151000)))
			}
			tr := store.Turn{ID: fmt.Sprintf("chatcmpl-d%d-%d", si, k), SessionID: sess.ID,
				Messages: append([]chat.Message(nil), msgs...), PromptIDs: append([]int32(nil), ids...),
				PromptText: text.String(), ResponseText: "ok"}
			if err := s.InsertTurn(t.Context(), &tr); err != nil {
				t.Fatal(err)
			}
			want = append(want, tr)
			msgJSON, _ := jsonOrEmpty(tr.Messages, "[]")
			payloadBytes += len(msgJSON) + len(tr.PromptText) + 4*len(tr.PromptIDs)
			msgs = append(msgs, chat.Message{Role: chat.RoleAssistant, Content: fmt.Sprintf("answer %d", k)})
		}
	}
	var chunkBytes int
	if err := s.reader.QueryRowContext(t.Context(), `SELECT COALESCE(SUM(length(data)), 0) FROM chunks`).Scan(&chunkBytes); err != nil {
		t.Fatal(err)
	}
	t.Logf("payload fields %d bytes, stored as %d bytes of chunks (%.1f×)", payloadBytes, chunkBytes, float64(payloadBytes)/float64(chunkBytes))
	if chunkBytes*3 > payloadBytes {
		t.Errorf("chunks hold %d bytes for %d bytes of payload fields: want at least 3× dedup", chunkBytes, payloadBytes)
	}
	s.Close()
	cold, err := OpenDir(t.Context(), dir, Options{PayloadCacheBytes: -1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer cold.Close()
	for _, w := range want {
		got, err := cold.Turn(t.Context(), w.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Messages) != len(w.Messages) || got.Messages[0].Content != system.Content ||
			!reflect.DeepEqual(got.Messages, w.Messages) ||
			got.PromptText != w.PromptText || fmt.Sprint(got.PromptIDs) != fmt.Sprint(w.PromptIDs) {
			t.Fatalf("turn %s differs after the chunked round trip", w.ID)
		}
	}
	if err := cold.IntegrityCheck(t.Context()); err != nil {
		t.Error(err)
	}
}

// TestChunkIDsOnlyCommitted: chunks written by an insert that then fails
// are rolled back with it, and the writer must not remember their ids.
func TestChunkIDsOnlyCommitted(t *testing.T) {
	s := openTest(t, t.TempDir()).(*Store)
	defer s.Close()
	sess := store.Session{Key: "rollback"}
	if err := s.CreateSession(t.Context(), &sess); err != nil {
		t.Fatal(err)
	}
	first := store.Turn{ID: "chatcmpl-a", SessionID: sess.ID, PromptIDs: make([]int32, 10000)}
	if err := s.InsertTurn(t.Context(), &first); err != nil {
		t.Fatal(err)
	}
	fresh := make([]int32, 20000)
	for i := range fresh {
		fresh[i] = int32(i * 7)
	}
	dup := store.Turn{ID: "chatcmpl-a", SessionID: sess.ID, PromptIDs: fresh}
	if err := s.InsertTurn(t.Context(), &dup); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("duplicate insert: %v", err)
	}
	again := store.Turn{ID: "chatcmpl-b", SessionID: sess.ID, PromptIDs: fresh}
	if err := s.InsertTurn(t.Context(), &again); err != nil {
		t.Fatal(err)
	}
	cold, err := OpenDir(t.Context(), s.path[:len(s.path)-len(FileName)], Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer cold.Close()
	got, err := cold.Turn(t.Context(), "chatcmpl-b")
	if err != nil {
		t.Fatalf("turn inserted after a rolled-back one: %v", err)
	}
	if fmt.Sprint(got.PromptIDs) != fmt.Sprint(fresh) {
		t.Error("prompt ids differ")
	}
}

// FuzzSplitChunks: any bytes cut into chunks join back to themselves, every
// chunk within bounds, and the same bytes always cut the same way.
func FuzzSplitChunks(f *testing.F) {
	f.Add([]byte("hello"), uint16(0))
	f.Add(randomBytes(9, 5000), uint16(3))
	f.Fuzz(func(t *testing.T, seed []byte, repeat uint16) {
		b := bytes.Repeat(seed, int(repeat%64)+1)
		c1 := splitChunks(b)
		checkChunks(t, b, c1)
		c2 := splitChunks(append([]byte(nil), b...))
		if len(c1) != len(c2) {
			t.Fatalf("same bytes cut into %d and %d chunks", len(c1), len(c2))
		}
	})
}
