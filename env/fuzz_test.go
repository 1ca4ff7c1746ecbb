package env

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

func FuzzDecodeCreate(f *testing.F) {
	f.Add([]byte(`{"task":{"id":"a","env":"toolcall","prompt":"p","answer":"1"}}`))
	f.Add([]byte(`{"task":{"id":"a","env":"terminal","prompt":"p","files":{"a/b":"x"},"test":"echo ok a"}}`))
	f.Add([]byte(`{"task":null}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		task, err := DecodeCreate(body)
		if err != nil {
			return
		}
		if task.ID == "" || task.Env == "" || task.Prompt == "" {
			t.Fatalf("accepted a task without required fields: %+v", task)
		}
		for p := range task.Files {
			if CheckRelPath(p) != nil {
				t.Fatalf("accepted file path %q", p)
			}
		}
	})
}

func FuzzDecodeStep(f *testing.F) {
	f.Add([]byte(`{"action":{"message":{"role":"assistant","content":"x","tool_calls":[{"id":"c","type":"function","function":{"name":"python","arguments":"{\"code\":\"1\"}"}}]}}}`))
	f.Add([]byte(`{"action":{}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		a, err := DecodeStep(body)
		if err != nil {
			return
		}
		if _, err := json.Marshal(a); err != nil {
			t.Fatalf("decoded action does not encode: %v", err)
		}
	})
}

func FuzzParseTasks(f *testing.F) {
	f.Add([]byte("{\"id\":\"a\",\"env\":\"toolcall\",\"prompt\":\"p\"}\n# c\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tasks, err := ParseTasks(bytes.NewReader(data), "fuzz")
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := WriteTasks(&buf, tasks); err != nil {
			t.Fatal(err)
		}
		back, err := ParseTasks(&buf, "again")
		if err != nil || len(back) != len(tasks) {
			t.Fatalf("round trip: %d → %d, %v", len(tasks), len(back), err)
		}
	})
}

// FuzzHandler sends arbitrary bodies to every route: the answer is always a
// JSON object, an error in the API's shape unless the call succeeded.
func FuzzHandler(f *testing.F) {
	f.Add(uint8(0), []byte(`{"task":{"id":"a","env":"count","prompt":"p"}}`))
	f.Add(uint8(1), []byte(`{"action":{"message":{"role":"assistant"}}}`))
	f.Add(uint8(2), []byte(`{}`))
	routes := []struct{ method, path string }{
		{"POST", "/v1/episodes"}, {"POST", "/v1/episodes/x/step"}, {"POST", "/v1/episodes/x/evaluate"},
		{"POST", "/v1/episodes/x/heartbeat"}, {"DELETE", "/v1/episodes/x"}, {"GET", "/v1/load"},
	}
	f.Fuzz(func(t *testing.T, route uint8, body []byte) {
		r := routes[int(route)%len(routes)]
		// A fresh pool per input: a create that succeeded must not hold a
		// slot the next input waits for.
		p, err := NewPool(PoolConfig{Limit: 4}, &countKind{})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Shutdown()
		h := Handler(p, "", nil)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(r.method, r.path, bytes.NewReader(body)))
		var v map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
			t.Fatalf("%s %s: answer is not a JSON object: %q", r.method, r.path, rec.Body.String())
		}
		if rec.Code != http.StatusOK {
			e, ok := v["error"].(map[string]any)
			if !ok || e["message"] == "" || e["code"] == "" {
				t.Fatalf("%s %s: error not in the API's shape: %q", r.method, r.path, rec.Body.String())
			}
		}
	})
}
