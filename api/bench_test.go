package api

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkHandler measures one chat completion through the handler with
// no network (decode, session, render, generate, record, encode), for
// profiling the gateway's own cost: the scripted engine answers instantly
// and the store is the real SQLite one.
func BenchmarkHandler(b *testing.B) {
	for _, stream := range []bool{false, true} {
		b.Run(fmt.Sprintf("stream=%v", stream), func(b *testing.B) {
			st := openTestStore(&testing.T{})
			srv, err := New(Config{Engine: newTestServer(&testing.T{}, serverOptions{store: st}).engine, Store: st, Logger: discardLogger()})
			if err != nil {
				b.Fatal(err)
			}
			h := srv.Handler()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				body := fmt.Sprintf(`{"stream":%v,"messages":[{"role":"user","content":"client says hello number %d"}]}`, stream, i)
				req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body))
				req.Header.Set("X-Session-Id", fmt.Sprintf("bench-%d", i%64))
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != 200 {
					b.Fatalf("status %d: %s", w.Code, w.Body)
				}
			}
		})
	}
}
