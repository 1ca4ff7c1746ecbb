package sqlite

import (
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/store"
)

// realisticTurn is the size of an OpenClaw main turn: a 30k-character
// system prompt, a few messages, 8k prompt ids and a 512-token answer.
func realisticTurn(id, sessionID string) store.Turn {
	prompt := make([]int32, 8192)
	for i := range prompt {
		prompt[i] = int32(i*7919) % 151000
	}
	resp := make([]int32, 512)
	lps := make([]float32, 512)
	for i := range resp {
		resp[i], lps[i] = int32(i*31)%151000, -float32(i%17)/8
	}
	return store.Turn{
		ID: id, SessionID: sessionID, Type: store.Main, Model: "qwen3", Engine: "native",
		Messages: []chat.Message{
			{Role: chat.RoleSystem, Content: strings.Repeat("You are a careful agent. ", 1200)}, // 30k chars
			{Role: chat.RoleUser, Content: "Summarise the repository layout and propose a plan."},
			{Role: chat.RoleAssistant, Content: strings.Repeat("plan step ", 100)},
			{Role: chat.RoleUser, Content: "Go on."},
		},
		PromptText:        strings.Repeat("x", 32000),
		PromptIDs:         prompt,
		Response:          chat.Message{Role: chat.RoleAssistant, Content: strings.Repeat("word ", 400)},
		ResponseText:      strings.Repeat("word ", 400),
		ResponseIDs:       resp,
		BehaviourLogprobs: lps,
		PolicyVersion:     3, FinishReason: "stop", PromptTokens: 8192, CompletionTokens: 512,
		ConversationHash: "h-" + id,
	}
}

func benchStore(b *testing.B, sync string) (*Store, store.Session) {
	b.Helper()
	page := 0
	if v := os.Getenv("CLAWRL_BENCH_PAGE_SIZE"); v != "" {
		page, _ = strconv.Atoi(v)
	}
	s, err := OpenDir(b.Context(), b.TempDir(), Options{Synchronous: sync, PageSize: page, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	sess := store.Session{Key: "bench"}
	if err := s.CreateSession(b.Context(), &sess); err != nil {
		b.Fatal(err)
	}
	return s, sess
}

func reportSize(b *testing.B, s *Store, turns int) {
	b.Helper()
	var total int64
	for _, suffix := range []string{"", "-wal"} {
		if fi, err := os.Stat(s.Path() + suffix); err == nil {
			total += fi.Size()
		}
	}
	if turns > 0 {
		b.ReportMetric(float64(total)/float64(turns), "disk-B/turn")
	}
}

// BenchmarkInsertTurn: one writer, realistic turns, NORMAL (default) and FULL.
//
//	go test -run '^$' -bench 'InsertTurn|ObserveTurn|Lookup' -benchtime 2s ./store/sqlite/
func BenchmarkInsertTurn(b *testing.B) {
	for _, sync := range []string{"NORMAL", "FULL"} {
		b.Run(sync, func(b *testing.B) {
			s, sess := benchStore(b, sync)
			turns := make([]store.Turn, 0, b.N)
			tmpl := realisticTurn("", sess.ID)
			for i := range b.N {
				tr := tmpl
				tr.ID = fmt.Sprintf("chatcmpl-%d", i)
				turns = append(turns, tr)
			}
			b.ResetTimer()
			for i := range turns {
				if err := s.InsertTurn(b.Context(), &turns[i]); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			reportSize(b, s, b.N)
		})
	}
}

// BenchmarkInsertTurnParallel: 200 concurrent inserters (the gateway's 200
// sessions) share the single writer connection.
func BenchmarkInsertTurnParallel(b *testing.B) {
	s, _ := benchStore(b, "")
	const sessions = 200
	ids := make([]string, sessions)
	for i := range ids {
		sess := store.Session{Key: fmt.Sprintf("p%d", i)}
		if err := s.CreateSession(b.Context(), &sess); err != nil {
			b.Fatal(err)
		}
		ids[i] = sess.ID
	}
	tmpl := realisticTurn("", "")
	var n atomic.Int64
	// 100 goroutines per CPU: at least the 200 of the issue on 2 cores.
	b.SetParallelism(100)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			tr := tmpl
			tr.ID, tr.SessionID = fmt.Sprintf("chatcmpl-%d", i), ids[i%sessions]
			if err := s.InsertTurn(b.Context(), &tr); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkObserveTurn: generated → observed with a short next state, the
// other write of every request.
func BenchmarkObserveTurn(b *testing.B) {
	s, sess := benchStore(b, "")
	small := realisticTurn("", sess.ID)
	small.Messages, small.PromptIDs, small.PromptText = small.Messages[1:2], small.PromptIDs[:64], ""
	ids := make([]string, b.N)
	for i := range ids {
		tr := small
		tr.ID = fmt.Sprintf("chatcmpl-%d", i)
		if err := s.InsertTurn(b.Context(), &tr); err != nil {
			b.Fatal(err)
		}
		ids[i] = tr.ID
	}
	next := []chat.Message{{Role: chat.RoleUser, Content: "thanks — now the tests please"}}
	at := time.Now()
	b.ResetTimer()
	for _, id := range ids {
		if err := s.ObserveTurn(b.Context(), id, next, store.NextUser, at); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLookup: the reads the gateway makes per request (hash lookup of a
// realistic turn, session by key), on the reader pool.
func BenchmarkLookup(b *testing.B) {
	s, sess := benchStore(b, "")
	const rows = 1000
	for i := range rows {
		tr := realisticTurn(fmt.Sprintf("chatcmpl-%d", i), sess.ID)
		if err := s.InsertTurn(b.Context(), &tr); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("TurnByConversationHash", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				if _, err := s.TurnByConversationHash(b.Context(), fmt.Sprintf("h-chatcmpl-%d", i%rows)); err != nil {
					b.Error(err)
					return
				}
				i++
			}
		})
	})
	b.Run("SessionByKey", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := s.SessionByKey(b.Context(), "bench"); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// BenchmarkInsertTurnSmall: a short chat turn (what the gateway overhead
// benchmark sends): two messages, 64 prompt ids, 16 response ids.
func BenchmarkInsertTurnSmall(b *testing.B) {
	s, sess := benchStore(b, "")
	tmpl := store.Turn{SessionID: sess.ID, Type: store.Main,
		Messages:          []chat.Message{{Role: chat.RoleSystem, Content: "Be brief."}, {Role: chat.RoleUser, Content: "hi"}},
		PromptIDs:         make([]int32, 64),
		Response:          chat.Message{Role: chat.RoleAssistant, Content: "hello"},
		ResponseIDs:       make([]int32, 16),
		BehaviourLogprobs: make([]float32, 16),
	}
	b.ResetTimer()
	for i := range b.N {
		tr := tmpl
		tr.ID = fmt.Sprintf("chatcmpl-%d", i)
		if err := s.InsertTurn(b.Context(), &tr); err != nil {
			b.Fatal(err)
		}
	}
}
