package api

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/clawrl/clawrl/engine/scripted"
)

// BenchmarkHandler measures one chat completion through the handler with
// no network (decode, session, render, generate, record, encode), for
// profiling the gateway's own cost: the scripted engine answers instantly
// and the store is the real SQLite one. "serial" is one client (every
// commit alone); "64 clients" runs 64 goroutines at once, as `clawrl bench
// gateway` does, so concurrent turns share the store's group commits.
func BenchmarkHandler(b *testing.B) {
	for _, stream := range []bool{false, true} {
		b.Run(fmt.Sprintf("stream=%v/serial", stream), func(b *testing.B) {
			h := benchHandler(b)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				benchRequest(b, h, stream, i)
			}
		})
		b.Run(fmt.Sprintf("stream=%v/64_clients", stream), func(b *testing.B) {
			h := benchHandler(b)
			b.ReportAllocs()
			// RunParallel starts parallelism × GOMAXPROCS goroutines.
			b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
			var n atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					benchRequest(b, h, stream, int(n.Add(1)))
				}
			})
		})
	}
}

func benchHandler(b *testing.B) http.Handler {
	b.Helper()
	st := openTestStore(b)
	srv, err := New(Config{Engine: scripted.New(scripted.Options{}), Store: st, Logger: discardLogger()})
	if err != nil {
		b.Fatal(err)
	}
	return srv.Handler()
}

func benchRequest(b *testing.B, h http.Handler, stream bool, i int) {
	body := fmt.Sprintf(`{"stream":%v,"messages":[{"role":"user","content":"client says hello number %d"}]}`, stream, i)
	req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("X-Session-Id", fmt.Sprintf("bench-%d", i%64))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != 200 {
		b.Errorf("status %d: %s", w.Code, w.Body)
	}
}
