package vllm

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/clawrl/clawrl/engine/remote"
)

// Shapes as vLLM 0.32 streams them for /v1/completions with a token-id
// prompt, return_token_ids, return_tokens_as_token_ids and logprobs=2.
const streamedChunk = `{"id":"cmpl-1","object":"text_completion","created":1,"model":"m","choices":[{"index":0,"text":" hi",
"logprobs":{"text_offset":[0],"token_logprobs":[-0.25],"tokens":["token_id:1234"],"top_logprobs":[{"token_id:1234":-0.25,"token_id:99":-1.5}]},
"finish_reason":null,"stop_reason":null,"token_ids":[1234],"prompt_token_ids":null}],"usage":null}`

func TestChunkTokens(t *testing.T) {
	c, ok, err := parseChunk([]byte(streamedChunk))
	if err != nil || !ok {
		t.Fatalf("parseChunk: %v, %v", ok, err)
	}
	toks, err := chunkTokens(c, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(toks) != 1 || toks[0].ID != 1234 || toks[0].Logprob != -0.25 || len(toks[0].Top) != 2 ||
		toks[0].Top[0].ID != 1234 || toks[0].Top[1].ID != 99 || toks[0].Top[1].Logprob != -1.5 {
		t.Errorf("tokens %+v", toks)
	}
	// Usage-only chunks carry no choice.
	if _, ok, err := parseChunk([]byte(`{"choices":[],"usage":{"prompt_tokens":3}}`)); ok || err != nil {
		t.Errorf("usage chunk: %v, %v", ok, err)
	}
	// An error in the stream is vLLM's message.
	_, _, err = parseChunk([]byte(`{"error":{"message":"boom","type":"InternalServerError","code":500}}`))
	var re *remote.Error
	if !errors.As(err, &re) || re.Message != "boom" {
		t.Errorf("error chunk: %v", err)
	}
	for _, bad := range []string{
		`{"choices":[{"token_ids":[1,2],"logprobs":{"tokens":["token_id:1"],"token_logprobs":[-1]}}]}`, // counts differ
		`{"choices":[{"token_ids":[1],"logprobs":{"tokens":["x"],"token_logprobs":[0.5]}}]}`,           // positive logprob
		`{"choices":[{"token_ids":[1]}]}`,                                      // no logprobs
		`{"choices":[{"logprobs":{"tokens":["nope"],"token_logprobs":[-1]}}]}`, // not token_id:N
		`not json`,
	} {
		c, ok, err := parseChunk([]byte(bad))
		if err == nil && ok {
			_, err = chunkTokens(c, 0)
		}
		if !errors.Is(err, errGarbage) {
			t.Errorf("%s: err %v, want errGarbage", bad, err)
		}
	}
}

func TestPromptLogprobs(t *testing.T) {
	var resp completionResponse
	body := `{"choices":[{"index":0,"text":"x","prompt_logprobs":[null,
		{"7":{"logprob":-2.5,"rank":3,"decoded_token":"a"},"1":{"logprob":-0.1,"rank":1,"decoded_token":"b"}},
		{"9":{"logprob":-0.75,"rank":1,"decoded_token":"c"}}]}]}`
	if err := json.Unmarshal([]byte(body), &resp); err != nil {
		t.Fatal(err)
	}
	got, err := parsePromptLogprobs(resp.Choices[0].PromptLogprobs, []int32{5, 7, 9}, 2)
	if err != nil || len(got) != 2 || got[0] != -2.5 || got[1] != -0.75 {
		t.Fatalf("got %v, %v", got, err)
	}
	if _, err := parsePromptLogprobs(resp.Choices[0].PromptLogprobs, []int32{5, 8, 9}, 2); !errors.Is(err, errGarbage) {
		t.Errorf("missing id: %v", err)
	}
	if _, err := parsePromptLogprobs(resp.Choices[0].PromptLogprobs, []int32{5, 7}, 1); !errors.Is(err, errGarbage) {
		t.Errorf("length mismatch: %v", err)
	}
}

func TestParseURLs(t *testing.T) {
	got, err := ParseURLs("http://a:8000/, http://b:8000")
	if err != nil || len(got) != 2 || got[0] != "http://a:8000" {
		t.Fatalf("%v %v", got, err)
	}
	for _, bad := range []string{"", ",", "a:8000", "ftp://x"} {
		if _, err := ParseURLs(bad); err == nil {
			t.Errorf("ParseURLs(%q) succeeded", bad)
		}
	}
}

// FuzzStreamChunk: whatever a server streams, parsing never panics and
// either yields well-formed tokens or errGarbage / vLLM's error.
func FuzzStreamChunk(f *testing.F) {
	f.Add([]byte(streamedChunk))
	f.Add([]byte(`{"choices":[{"token_ids":[1],"logprobs":{"tokens":["token_id:1"],"token_logprobs":[null]}}]}`))
	f.Add([]byte(`{"object":"error","message":"x"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, ok, err := parseChunk(data)
		if err != nil || !ok {
			return
		}
		toks, err := chunkTokens(c, 3)
		if err != nil {
			return
		}
		for _, tok := range toks {
			if tok.Logprob > 0 || len(tok.Top) > 3 {
				t.Fatalf("accepted token %+v", tok)
			}
		}
	})
}

// FuzzPromptLogprobs: a malformed prompt_logprobs answer is an error, not a
// panic or a made-up number.
func FuzzPromptLogprobs(f *testing.F) {
	f.Add([]byte(`[null,{"7":{"logprob":-2.5}},{"9":-0.75}]`), 2)
	f.Add([]byte(`[null,{"7":{}}]`), 1)
	f.Fuzz(func(t *testing.T, data []byte, n int) {
		var entries []map[string]json.RawMessage
		if json.Unmarshal(data, &entries) != nil || n < 0 || n > len(entries) {
			return
		}
		ids := make([]int32, len(entries))
		for i := range ids {
			ids[i] = 7 // the key the seeds use
		}
		got, err := parsePromptLogprobs(entries, ids, n)
		if err == nil {
			for _, v := range got {
				if v > 0 {
					t.Fatalf("accepted logprob %v", v)
				}
			}
		}
	})
}
