package openclaw

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// How long one OpenClaw command may take. A turn is 8–15 s on two busy cores
// plus the model's own time; the bounds are generous so that only a hang fails.
const (
	agentTimeout        = 5 * time.Minute
	compactTimeout      = 5 * time.Minute
	gatewayReadyTimeout = 3 * time.Minute
	configTimeout       = 2 * time.Minute
)

// openClaw is one offline OpenClaw installation state: its config, state and
// home folders, and the gateway it runs.
type openClaw struct {
	tc          toolchain
	root        string
	configPath  string
	stateDir    string
	homeDir     string
	workspace   string
	gatewayPort int
	token       string
	gateway     *daemon
}

// providerConfig is what OpenClaw needs to use clawrl as its only provider.
type providerConfig struct {
	BaseURL   string // http://127.0.0.1:PORT/v1
	APIKey    string
	ModelID   string // as served in /v1/models
	Context   int    // contextWindow
	MaxTokens int    // max_completion_tokens OpenClaw sends
	// Temperature, when set, is sent with every request (OpenClaw's per-model
	// params); the test uses 0 so the tiny model answers greedily.
	Temperature *float64
	// LeanAgent narrows OpenClaw to the ls tool, without Tool Search and
	// skills: its prompts shrink from ~7.7k to ~2k tokens, which a CPU test
	// model prefills (and trains on) many times faster. Everything else is
	// what a default OpenClaw sends (testdata/capture-lean).
	LeanAgent bool
}

// offlineConfig is the OpenClaw configuration README's "Use with OpenClaw"
// documents, plus a loopback gateway for compaction. It is plain JSON, which
// is valid JSON5.
func offlineConfig(p providerConfig, gatewayPort int, token string) map[string]any {
	model := map[string]any{
		"id":            p.ModelID,
		"name":          "clawrl " + p.ModelID,
		"contextWindow": p.Context,
		"maxTokens":     p.MaxTokens,
		"compat": map[string]any{
			// <sessionId>:<compactionCount> in session_id / x-session-affinity
			// headers and prompt_cache_key: how clawrl recognises the session.
			"sendSessionAffinityHeaders": true,
			"supportsPromptCacheKey":     true,
		},
	}
	defaults := map[string]any{
		"model":         map[string]any{"primary": "clawrl/" + p.ModelID},
		"heartbeat":     map[string]any{"every": "0m"},
		"skipBootstrap": true,
	}
	if p.Temperature != nil {
		defaults["models"] = map[string]any{"clawrl/" + p.ModelID: map[string]any{"params": map[string]any{"temperature": *p.Temperature}}}
	}
	cfg := map[string]any{
		"models": map[string]any{
			"catalogRefresh": map[string]any{"enabled": false},
			"providers": map[string]any{
				"clawrl": map[string]any{
					"baseUrl": p.BaseURL,
					"apiKey":  p.APIKey,
					"api":     "openai-completions",
					"models":  []any{model},
				},
			},
		},
		"update":  map[string]any{"checkOnStart": false},
		"gateway": map[string]any{"mode": "local", "port": gatewayPort, "bind": "loopback", "auth": map[string]any{"mode": "token", "token": token}},
		"agents":  map[string]any{"defaults": defaults},
	}
	if p.LeanAgent {
		cfg["tools"] = map[string]any{"allow": []any{"ls"}, "toolSearch": false}
		defaults["skills"] = []any{}
	}
	return cfg
}

// newOpenClaw writes an offline configuration under root (a fresh folder)
// and validates it with `openclaw config validate`.
func newOpenClaw(t *testing.T, tc toolchain, root string, p providerConfig) *openClaw {
	t.Helper()
	oc := &openClaw{
		tc:          tc,
		root:        root,
		configPath:  filepath.Join(root, "openclaw.json5"),
		stateDir:    filepath.Join(root, "state"),
		homeDir:     filepath.Join(root, "home"),
		workspace:   filepath.Join(root, "state", "workspace"),
		gatewayPort: freePort(t),
		token:       "clawrl-e2e-gateway-token",
	}
	for _, d := range []string{oc.stateDir, oc.homeDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := json.MarshalIndent(offlineConfig(p, oc.gatewayPort, oc.token), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(oc.configPath, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, _, err := run(t, configTimeout, oc.env(), root, tc.OpenClaw, "config", "validate"); err != nil {
		t.Fatalf("openclaw config validate: %v\nconfig:\n%s", err, cfg)
	} else if !strings.Contains(out, "Config valid") {
		t.Fatalf("openclaw config validate said %q", out)
	}
	return oc
}

// env is the environment every OpenClaw command runs with: its own config,
// state and home, and everything that would reach the network switched off.
func (oc *openClaw) env() []string {
	return oc.tc.env(
		"OPENCLAW_CONFIG_PATH="+oc.configPath,
		"OPENCLAW_STATE_DIR="+oc.stateDir,
		"OPENCLAW_HOME="+oc.homeDir,
		"OPENCLAW_OFFLINE=1",
		"OPENCLAW_NO_AUTO_UPDATE=1",
		"OPENCLAW_DISABLE_BONJOUR=1",
		"OPENCLAW_GATEWAY_TOKEN="+oc.token,
		"NO_COLOR=1",
		// The Runtime line of OpenClaw's prompt names the shell it finds in
		// the environment; the warm start's prompts name the recorder's.
		"OPENCLAW_SHELL="+captureShell,
	)
}

// startGateway runs `openclaw gateway run` on loopback and waits until it
// accepts connections. Turns then go through it, and so does compaction,
// which only the gateway can do.
func (oc *openClaw) startGateway(t *testing.T) {
	t.Helper()
	oc.gateway = startDaemon(t, oc.env(), oc.root, oc.tc.OpenClaw, "gateway", "run",
		"--port", strconv.Itoa(oc.gatewayPort), "--bind", "loopback")
	waitFor(t, gatewayReadyTimeout, "the OpenClaw gateway", oc.gateway, func() error {
		if !strings.Contains(oc.gateway.out.String(), "[gateway] ready") {
			return errNotYet
		}
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(oc.gatewayPort), time.Second)
		if err != nil {
			return err
		}
		return c.Close()
	})
}

// agentReply is the part of `openclaw agent --json` the test reads.
type agentReply struct {
	Status string `json:"status"`
	Result struct {
		Payloads []struct {
			Text string `json:"text"`
		} `json:"payloads"`
		Meta struct {
			AgentMeta struct {
				SessionID  string `json:"sessionId"`
				SessionKey string `json:"sessionFile"`
				Provider   string `json:"provider"`
				Model      string `json:"model"`
			} `json:"agentMeta"`
		} `json:"meta"`
	} `json:"result"`
}

func (r agentReply) text() string {
	var parts []string
	for _, p := range r.Result.Payloads {
		parts = append(parts, p.Text)
	}
	return strings.Join(parts, "\n")
}

// admissionRace is the message of OpenClaw's transient failure to admit a
// turn while its session database's schema changes under the read; the
// CLI asks to retry, and agent does, at most agentAdmissionRetries times.
const (
	admissionRace         = "changed during admission; retry the read"
	agentAdmissionRetries = 3
)

// agent runs one agent turn of session id through the gateway.
//
// incomplete reports a turn OpenClaw gave up on because the model's answer
// was unusable even after its own retry (kind "incomplete_turn", e.g. a
// tool call the tiny model garbled): the requests were served and recorded,
// so the caller checks them in the store rather than failing here.
func (oc *openClaw) agent(t *testing.T, sessionID, message string) (r agentReply, incomplete bool) {
	t.Helper()
	var out string
	var err error
	for attempt := 1; ; attempt++ {
		out, _, err = run(t, agentTimeout, oc.env(), oc.root, oc.tc.OpenClaw, "agent",
			"--session-id", sessionID, "--message", message, "--json", "--timeout", "240")
		// OpenClaw's own session database can change its schema under the
		// CLI's read (seen once right after a compaction): the CLI fails
		// before the turn is admitted, no request reaches clawrl, and its
		// message says to retry the read. Retry it, a few times.
		if err == nil || attempt == agentAdmissionRetries || !strings.Contains(out, admissionRace) {
			break
		}
		t.Logf("openclaw agent turn %q: %s (attempt %d); retrying", message, admissionRace, attempt)
		time.Sleep(time.Second)
	}
	if err != nil {
		if strings.Contains(out, `"incomplete_turn"`) {
			t.Logf("openclaw agent turn %q: OpenClaw found the model's answer unusable (incomplete_turn)", message)
			return agentReply{}, true
		}
		t.Fatalf("openclaw agent turn %q: %v", message, err)
	}

	if err := json.Unmarshal([]byte(jsonObject(out)), &r); err != nil {
		t.Fatalf("openclaw agent --json output: %v\n%s", err, tail(out, 3000))
	}
	if r.Status != "ok" {
		t.Fatalf("openclaw agent turn %q: status %q\n%s", message, r.Status, tail(out, 3000))
	}
	return r, false
}

// compactResult is the part of `openclaw sessions compact --json` the test reads.
type compactResult struct {
	OK        bool   `json:"ok"`
	Key       string `json:"key"`
	Compacted bool   `json:"compacted"`
	Result    struct {
		Summary string `json:"summary"`
	} `json:"result"`
}

// compact asks the gateway to compact session key with the model's summary.
func (oc *openClaw) compact(t *testing.T, key string) compactResult {
	t.Helper()
	out, _, err := run(t, compactTimeout, oc.env(), oc.root, oc.tc.OpenClaw, "sessions", "compact", key,
		"--json", "--token", oc.token, "--timeout", strconv.Itoa(int((compactTimeout - 30*time.Second).Milliseconds())))
	if err != nil {
		t.Fatalf("openclaw sessions compact %s: %v", key, err)
	}
	var r compactResult
	if err := json.Unmarshal([]byte(jsonObject(out)), &r); err != nil {
		t.Fatalf("openclaw sessions compact --json output: %v\n%s", err, tail(out, 3000))
	}
	if !r.OK || !r.Compacted {
		t.Fatalf("openclaw sessions compact %s did not compact:\n%s", key, tail(out, 3000))
	}
	return r
}

// sessionKey is OpenClaw's key for a session started with --session-id id.
func sessionKey(id string) string { return "agent:main:explicit:" + id }

// jsonObject cuts the JSON object out of a command's stdout, in case a
// plugin logged a line before it.
func jsonObject(out string) string {
	if i := strings.IndexByte(out, '{'); i > 0 {
		return out[i:]
	}
	return out
}

func (oc *openClaw) String() string { return fmt.Sprintf("openclaw(%s)", oc.root) }
