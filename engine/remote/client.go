package remote

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// ErrGarbage marks an answer that does not have the shape asked for: the
// replica is unwell, so the request may be retried elsewhere.
var ErrGarbage = errors.New("malformed answer")

// Error is an error a server answered with.
type Error struct {
	Engine  string // "vllm", "sglang"
	Status  int    // HTTP status; 0 = an error inside a 200 (a stream's error event)
	Message string
}

func (e *Error) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("%s: HTTP %d: %s", e.Engine, e.Status, e.Message)
	}
	return e.Engine + ": " + e.Message
}

// retryable says whether another attempt (on another replica) may succeed:
// the replica is overloaded or broken, not the request.
func (e *Error) retryable() bool {
	return e.Status == 0 || e.Status == 429 || e.Status >= 500
}

// Client makes a protocol's HTTP calls.
type Client struct {
	HTTP   *http.Client
	Engine string // for messages
}

// Get fetches url and decodes its JSON answer into out.
func (c *Client) Get(ctx context.Context, url string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", c.Engine, url, err)
	}
	return c.decode(resp, url, out)
}

// Post sends body as JSON to url and decodes a JSON answer into out (nil:
// ignore it).
func (c *Client) Post(ctx context.Context, url string, body, out any) error {
	resp, err := c.Send(ctx, url, body)
	if err != nil {
		return err
	}
	return c.decode(resp, url, out)
}

func (c *Client) decode(resp *http.Response, url string, out any) error {
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return &Error{Engine: c.Engine, Status: resp.StatusCode, Message: ErrorMessage(data)}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s: %w: %v", c.Engine, url, ErrGarbage, err)
	}
	return nil
}

// Send posts body as JSON and returns the response when it is a 200; any
// other status becomes an *Error with the server's message.
func (c *Client) Send(ctx context.Context, url string, body any) (*http.Response, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusOK {
		return resp, nil
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return nil, &Error{Engine: c.Engine, Status: resp.StatusCode, Message: ErrorMessage(data)}
}

// ErrorMessage reads the message out of an error body in any of the shapes
// servers use: OpenAI's {"error":{"message"}}, vLLM's {"object":"error",
// "message"}, SGLang's {"error_message"} (adapter loading) and FastAPI's
// {"detail"}; else the body's text.
func ErrorMessage(data []byte) string {
	var body struct {
		Error        json.RawMessage `json:"error"`
		Message      string          `json:"message"`
		ErrorMessage string          `json:"error_message"`
		Detail       any             `json:"detail"`
	}
	if json.Unmarshal(data, &body) == nil {
		var inner struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case len(body.Error) > 0 && json.Unmarshal(body.Error, &inner) == nil && inner.Message != "":
			return inner.Message
		case len(body.Error) > 0 && json.Unmarshal(body.Error, &s) == nil && s != "":
			return s
		case body.Message != "":
			return body.Message
		case body.ErrorMessage != "":
			return body.ErrorMessage
		case body.Detail != nil:
			if d, err := json.Marshal(body.Detail); err == nil {
				return string(d)
			}
		}
	}
	return strings.TrimSpace(string(data))
}

// ReadSSE calls event with the data of each server-sent event of r until
// "[DONE]", the end of r, or event returning done or an error.
func ReadSSE(r io.Reader, event func(data []byte) (done bool, err error)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data:"))
		if !ok {
			continue
		}
		data = bytes.TrimSpace(data)
		if string(data) == "[DONE]" {
			return nil
		}
		done, err := event(data)
		if err != nil || done {
			return err
		}
	}
	return sc.Err()
}

// BaseModel reads url's OpenAI-compatible /v1/models (vLLM and SGLang answer
// the same shape) and returns the base model's id and max_model_len; loaded
// adapters are listed too, naming their base as parent. name is the engine's,
// for the error.
func (c *Client) BaseModel(ctx context.Context, name, url string) (string, int, error) {
	var body struct {
		Data []struct {
			ID          string `json:"id"`
			Parent      any    `json:"parent"`
			MaxModelLen int    `json:"max_model_len"`
		} `json:"data"`
	}
	if err := c.Get(ctx, url+"/v1/models", &body); err != nil {
		return "", 0, err
	}
	for _, d := range body.Data {
		if d.Parent == nil {
			return d.ID, d.MaxModelLen, nil
		}
	}
	return "", 0, fmt.Errorf("%s %s: /v1/models lists no base model", name, url)
}
