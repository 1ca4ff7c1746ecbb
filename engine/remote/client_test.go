package remote

import (
	"strings"
	"testing"
)

func TestErrorMessage(t *testing.T) {
	cases := map[string]string{
		`{"error":{"message":"boom","type":"BadRequestError"}}`:       "boom",
		`{"object":"error","message":"model x not found","code":404}`: "model x not found",
		`{"success":false,"error_message":"bad adapter"}`:             "bad adapter",
		`{"detail":[{"msg":"field required"}]}`:                       `[{"msg":"field required"}]`,
		`{"error":"plain"}`:                                           "plain",
		"Internal Server Error\n":                                     "Internal Server Error",
	}
	for body, want := range cases {
		if got := ErrorMessage([]byte(body)); got != want {
			t.Errorf("ErrorMessage(%s) = %q, want %q", body, got, want)
		}
	}
}

func TestReadSSE(t *testing.T) {
	var got []string
	err := ReadSSE(strings.NewReader("event: x\ndata: {\"a\":1}\n\n: comment\ndata:{\"b\":2}\n\ndata: [DONE]\n\ndata: after\n\n"), func(d []byte) (bool, error) {
		got = append(got, string(d))
		return false, nil
	})
	if err != nil || len(got) != 2 || got[0] != `{"a":1}` || got[1] != `{"b":2}` {
		t.Errorf("events %q, %v", got, err)
	}
}

// FuzzErrorMessage: any body a server sends yields a message, never a panic.
func FuzzErrorMessage(f *testing.F) {
	f.Add([]byte(`{"error":{"message":"boom"}}`))
	f.Add([]byte(`{"detail":null}`))
	f.Add([]byte(`{"error":[1,2]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		_ = ErrorMessage(body)
	})
}
