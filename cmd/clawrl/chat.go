package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

func init() { subcommands = append(subcommands, newChatCmd) }

func newChatCmd() *cobra.Command {
	var c chatClient
	cmd := &cobra.Command{
		Use:   "chat",
		Short: "Talk to a running clawrl server from the terminal, and rate its answers",
		Long: `A terminal client for a running clawrl server. Type a message and press
Enter; the answer streams back. Commands:

  /good [text]   rate the last answer +1 (👍), with optional written feedback
  /bad [text]    rate the last answer -1 (👎), with optional written feedback
  /note text     written feedback on the last answer, no rating
  /new           start a new session
  /quit          leave (Ctrl-D works too)

Ratings go to POST /v1/feedback and become the strongest evidence the judge
sees for that answer.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c.out = cmd.OutOrStdout()
			c.http = &http.Client{Timeout: 10 * time.Minute}
			c.newSession()
			return c.loop(cmd.InOrStdin())
		},
	}
	f := cmd.Flags()
	f.StringVar(&c.url, "url", "http://127.0.0.1:30000", "the server's base URL")
	f.StringVar(&c.apiKey, "api-key", os.Getenv("CLAWRL_API_KEY"), "Bearer key, if the server requires one (env CLAWRL_API_KEY)")
	f.StringVar(&c.model, "model", "", "model id (default: the server's first model)")
	f.StringVar(&c.system, "system", "", "system prompt")
	f.IntVar(&c.maxTokens, "max-tokens", 512, "max tokens per answer")
	return cmd
}

type chatClient struct {
	url, apiKey, model, system string
	maxTokens                  int
	out                        io.Writer
	http                       *http.Client

	session string
	history []map[string]any
	lastID  string
}

func (c *chatClient) newSession() {
	var b [6]byte
	_, _ = rand.Read(b[:])
	c.session = "chat-" + hex.EncodeToString(b[:])
	c.history = nil
	c.lastID = ""
	if c.system != "" {
		c.history = append(c.history, map[string]any{"role": "system", "content": c.system})
	}
}

func (c *chatClient) loop(in io.Reader) error {
	fmt.Fprintf(c.out, "clawrl chat — session %s on %s. /good, /bad, /note, /new, /quit.\n", c.session, c.url)
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for {
		fmt.Fprint(c.out, "> ")
		if !sc.Scan() {
			fmt.Fprintln(c.out)
			return sc.Err()
		}
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var err error
		switch cmd, rest, _ := strings.Cut(line, " "); cmd {
		case "/quit", "/exit":
			return nil
		case "/new":
			c.newSession()
			fmt.Fprintf(c.out, "new session %s\n", c.session)
		case "/good", "/up", "/+1":
			err = c.feedback(1, rest)
		case "/bad", "/down", "/-1":
			err = c.feedback(-1, rest)
		case "/note":
			err = c.feedback(0, rest)
		default:
			if strings.HasPrefix(cmd, "/") {
				fmt.Fprintf(c.out, "unknown command %s\n", cmd)
				continue
			}
			err = c.send(line)
		}
		if err != nil {
			fmt.Fprintf(c.out, "error: %v\n", err)
		}
	}
}

func (c *chatClient) post(path string, body any) (*http.Response, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequest(http.MethodPost, strings.TrimRight(c.url, "/")+path, bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Session-Id", c.session)
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		var e struct {
			Error struct{ Message string } `json:"error"`
		}
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		if json.Unmarshal(raw, &e) == nil && e.Error.Message != "" {
			return nil, fmt.Errorf("%s: %s", resp.Status, e.Error.Message)
		}
		return nil, fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(raw)))
	}
	return resp, nil
}

func (c *chatClient) feedback(rating int, text string) error {
	if c.lastID == "" {
		return errors.New("no answer to rate: send a message, and rate its answer once it has arrived")
	}
	resp, err := c.post("/v1/feedback", map[string]any{"id": c.lastID, "rating": rating, "text": strings.TrimSpace(text)})
	if err != nil {
		return err
	}
	resp.Body.Close()
	fmt.Fprintln(c.out, "feedback recorded")
	return nil
}

// send streams one answer and appends both messages to the history.
func (c *chatClient) send(text string) error {
	// Until this answer has arrived whole there is no answer to rate: a
	// /good after a failed one must not land on the answer before it.
	c.lastID = ""
	msgs := append(c.history, map[string]any{"role": "user", "content": text})
	body := map[string]any{"messages": msgs, "stream": true, "max_tokens": c.maxTokens,
		"stream_options": map[string]any{"include_usage": true}}
	if c.model != "" {
		body["model"] = c.model
	}
	resp, err := c.post("/v1/chat/completions", body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	content, id, err := readChatStream(resp.Body, c.out)
	if err != nil {
		fmt.Fprintln(c.out)
		return err
	}
	fmt.Fprintln(c.out)
	c.history = append(msgs, map[string]any{"role": "assistant", "content": content})
	c.lastID = id
	return nil
}

// readChatStream reads a streamed chat completion (server-sent events),
// printing reasoning, content and tool calls to out as they arrive, and
// returns the answer's content and id. An answer counts only once its
// [DONE] has arrived: an error event (the gateway's {"error":{…}} after
// streaming began) or a stream that ends without [DONE] (the server gone)
// is an error, and the partial answer is not kept.
func readChatStream(r io.Reader, out io.Writer) (content, id string, err error) {
	var text strings.Builder
	inReasoning := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if data == "[DONE]" {
			return text.String(), id, nil
		}
		var chunk struct {
			ID      string `json:"id"`
			Choices []struct {
				Delta struct {
					Content   string `json:"content"`
					Reasoning string `json:"reasoning_content"`
					ToolCalls []struct {
						Function struct{ Name, Arguments string } `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
			} `json:"choices"`
			Error *struct {
				Message string `json:"message"`
				Type    string `json:"type"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			return "", "", fmt.Errorf("bad stream chunk %q: %w", data, err)
		}
		if e := chunk.Error; e != nil {
			msg := e.Message
			if msg == "" {
				msg = "(no message)"
			}
			if e.Type != "" {
				msg += " (" + e.Type + ")"
			}
			return "", "", fmt.Errorf("the server stopped the answer: %s; the partial answer is dropped from this conversation", msg)
		}
		if chunk.ID != "" {
			id = chunk.ID
		}
		for _, ch := range chunk.Choices {
			d := ch.Delta
			if d.Reasoning != "" {
				if !inReasoning {
					fmt.Fprint(out, "(thinking) ")
					inReasoning = true
				}
				fmt.Fprint(out, d.Reasoning)
			}
			if d.Content != "" {
				if inReasoning {
					fmt.Fprint(out, "\n")
					inReasoning = false
				}
				text.WriteString(d.Content)
				fmt.Fprint(out, d.Content)
			}
			for _, tc := range d.ToolCalls {
				if tc.Function.Name != "" {
					fmt.Fprintf(out, "\n[tool call %s] ", tc.Function.Name)
				}
				fmt.Fprint(out, tc.Function.Arguments)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return "", "", fmt.Errorf("the answer stream broke off: %w; the partial answer is dropped from this conversation", err)
	}
	return "", "", errors.New("the answer stream ended before [DONE] (the server closed it); the partial answer is dropped from this conversation")
}
