package chatfmt

import (
	"encoding/json"
	"fmt"
	"strings"
)

// OpenClaw-shaped requests (shared/REFERENCE.md §2): a system prompt of about
// 25k characters, 12 tools with realistic JSON schemas, history with
// assistant{content:null, tool_calls} + tool{tool_call_id} rounds, the
// current user message and a trailing internal-context user message.

// openclawTools are 12 tool definitions in the shape OpenClaw sends, with
// nested objects, enums, arrays, defaults, unicode and quotes in
// descriptions, and keys in a deliberately non-alphabetical order.
func openclawTools() []json.RawMessage {
	defs := []string{
		`{"type":"function","function":{"name":"read","description":"Read the contents of a file. Supports text files and images (jpg, png, gif, webp). For text files, output is truncated to 2000 lines or 50KB (whichever is hit first). Use offset/limit for large files.","parameters":{"type":"object","properties":{"path":{"description":"Path to the file to read (relative or absolute)","type":"string"},"offset":{"description":"Line number to start reading from (1-indexed)","type":"number"},"limit":{"description":"Maximum number of lines to read","type":"number"}},"required":["path"],"additionalProperties":false}}}`,
		`{"type":"function","function":{"name":"write","description":"Write content to a file. Creates the file if it doesn't exist, overwrites if it does. Automatically creates parent directories.","parameters":{"type":"object","properties":{"path":{"description":"Path to the file to write (relative or absolute)","type":"string"},"content":{"description":"Content to write to the file","type":"string"}},"required":["path","content"],"additionalProperties":false}}}`,
		`{"type":"function","function":{"name":"edit","description":"Edit a file by replacing exact text. The oldText must match exactly (including whitespace). Use this for precise, surgical edits.","parameters":{"type":"object","properties":{"path":{"description":"Path to the file to edit (relative or absolute)","type":"string"},"oldText":{"description":"Exact text to find and replace (must match exactly)","type":"string"},"newText":{"description":"New text to replace the old text with","type":"string"}},"required":["path","oldText","newText"],"additionalProperties":false}}}`,
		`{"type":"function","function":{"name":"exec","description":"Execute shell commands with background continuation. Use yieldMs/background to continue later via process tool. Use pty=true for TTY-required commands (terminal UIs, coding agents).","parameters":{"type":"object","properties":{"command":{"description":"Shell command to execute","type":"string"},"workdir":{"description":"Working directory (defaults to cwd)","type":"string"},"env":{"type":"object","patternProperties":{"^(.*)$":{"type":"string"}}},"yieldMs":{"description":"Milliseconds to wait before backgrounding (default 10000)","type":"number"},"background":{"description":"Run in background immediately","type":"boolean"},"timeout":{"description":"Timeout in seconds (optional, kills process on expiry)","type":"number"},"pty":{"description":"Run in a pseudo-terminal (PTY) when available","type":"boolean"},"elevated":{"description":"Run on the host with elevated permissions (if allowed)","type":"boolean"}},"required":["command"],"additionalProperties":false}}}`,
		`{"type":"function","function":{"name":"process","description":"Manage running exec sessions: list, poll, log, write, send-keys, submit, paste, kill.","parameters":{"type":"object","properties":{"action":{"type":"string","enum":["list","poll","log","write","send-keys","submit","paste","kill"],"description":"Process action"},"sessionId":{"description":"Session id for actions other than list","type":"string"},"data":{"description":"Data to write for write","type":"string"},"keys":{"description":"Key tokens to send for send-keys","type":"array","items":{"type":"string"}},"offset":{"description":"Log offset","type":"number"},"limit":{"description":"Log length","type":"number"}},"required":["action"],"additionalProperties":false}}}`,
		`{"type":"function","function":{"name":"web_search","description":"Search the web using Brave Search API. Supports region-specific and localized search via country and language parameters. Returns titles, URLs, and snippets for fast research.","parameters":{"type":"object","properties":{"query":{"description":"Search query string.","type":"string"},"count":{"description":"Number of results to return (1-10).","minimum":1,"maximum":10,"type":"number"},"country":{"description":"2-letter country code for region-specific results (e.g., 'DE', 'US', 'ALL'). Default: 'US'.","type":"string"},"search_lang":{"description":"ISO language code for search results (e.g., 'de', 'en', 'fr').","type":"string"},"freshness":{"description":"Filter results by discovery time. Values: 'pd' (past 24h), 'pw' (past week), 'pm' (past month), 'py' (past year), or date range 'YYYY-MM-DDtoYYYY-MM-DD'.","type":"string"}},"required":["query"],"additionalProperties":false}}}`,
		`{"type":"function","function":{"name":"web_fetch","description":"Fetch and extract readable content from a URL (HTML → markdown/text). Use for lightweight page access without browser automation.","parameters":{"type":"object","properties":{"url":{"description":"HTTP or HTTPS URL to fetch.","type":"string"},"extractMode":{"description":"Extraction mode (\"markdown\" or \"text\").","default":"markdown","type":"string","enum":["markdown","text"]},"maxChars":{"description":"Maximum characters to return (truncates when exceeded).","minimum":100,"type":"number"}},"required":["url"],"additionalProperties":false}}}`,
		`{"type":"function","function":{"name":"browser","description":"Control the browser via OpenClaw's browser control server (status/start/stop/profiles/tabs/open/snapshot/screenshot/actions). Use snapshot+act for UI automation.","parameters":{"type":"object","properties":{"action":{"type":"string","enum":["status","start","stop","profiles","tabs","open","focus","close","snapshot","screenshot","navigate","console","pdf","upload","dialog","act"]},"profile":{"type":"string"},"targetUrl":{"type":"string"},"targetId":{"type":"string"},"limit":{"type":"number"},"maxChars":{"type":"number"},"mode":{"type":"string","enum":["efficient"]},"snapshotFormat":{"type":"string","enum":["aria","ai"]},"refs":{"type":"string","enum":["role","aria"]},"interactive":{"type":"boolean"},"compact":{"type":"boolean"},"depth":{"type":"number"},"selector":{"type":"string"},"frame":{"type":"string"},"labels":{"type":"boolean"},"fullPage":{"type":"boolean"},"ref":{"type":"string"},"element":{"type":"string"},"type":{"type":"string","enum":["png","jpeg"]},"level":{"type":"string"},"paths":{"type":"array","items":{"type":"string"}},"inputRef":{"type":"string"},"timeoutMs":{"type":"number"},"accept":{"type":"boolean"},"promptText":{"type":"string"},"request":{"type":"object","properties":{"kind":{"type":"string","enum":["click","type","press","hover","drag","select","fill","resize","wait","evaluate","close"]},"targetId":{"type":"string"},"ref":{"type":"string"},"doubleClick":{"type":"boolean"},"button":{"type":"string"},"modifiers":{"type":"array","items":{"type":"string"}},"text":{"type":"string"},"submit":{"type":"boolean"},"slowly":{"type":"boolean"},"key":{"type":"string"},"startRef":{"type":"string"},"endRef":{"type":"string"},"values":{"type":"array","items":{"type":"string"}},"fields":{"type":"array","items":{"type":"object","additionalProperties":{}}},"width":{"type":"number"},"height":{"type":"number"},"timeMs":{"type":"number"},"textGone":{"type":"string"},"fn":{"type":"string"}},"required":["kind"],"additionalProperties":false}},"required":["action"],"additionalProperties":false}}}`,
		`{"type":"function","function":{"name":"message","description":"Send, delete, and manage messages via channel plugins. Supports actions: send, react, reactions, read, edit, delete — with media, buttons and polls where the channel allows it.","parameters":{"type":"object","properties":{"action":{"type":"string","enum":["send","react","reactions","read","edit","delete","poll"]},"channel":{"type":"string"},"to":{"description":"Target (chat id, user id, or \"@handle\")","type":"string"},"message":{"type":"string"},"media":{"type":"string"},"buttons":{"description":"Button rows: [[{\"text\":\"Yes\",\"callback_data\":\"yes\"}]]","type":"array","items":{"type":"array","items":{"type":"object","properties":{"text":{"type":"string"},"callback_data":{"type":"string"}},"required":["text","callback_data"],"additionalProperties":false}}},"emoji":{"type":"string"},"pollQuestion":{"type":"string"},"pollOption":{"type":"array","items":{"type":"string"}},"silent":{"type":"boolean"}},"required":["action"],"additionalProperties":false}}}`,
		`{"type":"function","function":{"name":"cron","description":"Manage Gateway cron jobs (status/list/add/update/remove/run/runs) and send wake events. Jobs run on a schedule: {\"kind\":\"at\",\"atMs\":…} or {\"kind\":\"every\",\"everyMs\":…} or {\"kind\":\"cron\",\"expr\":\"0 9 * * 1-5\",\"tz\":\"Europe/Berlin\"}.","parameters":{"type":"object","properties":{"action":{"type":"string","enum":["status","list","add","update","remove","run","runs","wake"]},"includeDisabled":{"type":"boolean"},"job":{"type":"object","properties":{"name":{"type":"string"},"schedule":{"anyOf":[{"type":"object","properties":{"kind":{"const":"at"},"atMs":{"type":"number"}},"required":["kind","atMs"]},{"type":"object","properties":{"kind":{"const":"every"},"everyMs":{"type":"number"},"anchorMs":{"type":"number"}},"required":["kind","everyMs"]},{"type":"object","properties":{"kind":{"const":"cron"},"expr":{"type":"string"},"tz":{"type":"string"}},"required":["kind","expr"]}]},"payload":{"type":"object","properties":{"kind":{"type":"string","enum":["systemEvent","agentTurn"]},"text":{"type":"string"}},"required":["kind"]},"enabled":{"type":"boolean","default":true}},"required":["schedule","payload"]},"jobId":{"type":"string"},"text":{"type":"string"},"mode":{"type":"string","enum":["now","next-heartbeat"]}},"required":["action"],"additionalProperties":false}}}`,
		`{"type":"function","function":{"name":"sessions_spawn","description":"Spawn a background sub-agent run in an isolated session and announce the result back to the requester chat.","parameters":{"type":"object","properties":{"task":{"type":"string"},"label":{"type":"string"},"agentId":{"type":"string"},"model":{"type":"string"},"thinking":{"type":"string","enum":["off","minimal","low","medium","high"]},"runTimeoutSeconds":{"minimum":0,"type":"integer"},"cleanup":{"type":"string","enum":["delete","keep"]}},"required":["task"],"additionalProperties":false}}}`,
		`{"type":"function","function":{"name":"memory_search","description":"Mandatory recall step: semantically search MEMORY.md + memory/*.md (and optional session transcripts) before answering questions about prior work, decisions, dates, people, preferences, or todos; returns top snippets with path + lines.","parameters":{"type":"object","properties":{"query":{"type":"string"},"maxResults":{"type":"number"},"minScore":{"type":"number","default":0.35}},"required":["query"],"additionalProperties":false}}}`,
	}
	out := make([]json.RawMessage, len(defs))
	for i, d := range defs {
		if !json.Valid([]byte(d)) {
			panic(fmt.Sprintf("tool %d: invalid JSON", i))
		}
		out[i] = json.RawMessage(d)
	}
	return out
}

// openclawSystemPrompt builds a deterministic system prompt of about n
// characters with the texture of OpenClaw's: markdown sections, bullet
// lists, code fences, JSON snippets, quotes, angle brackets and unicode.
func openclawSystemPrompt(n int) string {
	var b strings.Builder
	b.WriteString("You are a personal assistant running inside OpenClaw.\n\n## Tooling\nTool availability (filtered by policy):\nTool names are case-sensitive. Call tools exactly as listed.\n")
	sections := []string{"Safety", "Skills (mandatory)", "Memory Recall", "Workspace", "Messaging", "Reply Tags", "Heartbeats", "Runtime", "Group Chats", "Silent Replies"}
	for i := 0; b.Len() < n; i++ {
		s := sections[i%len(sections)]
		fmt.Fprintf(&b, "\n## %s (%d)\n", s, i)
		fmt.Fprintf(&b, "- Prefer `read` before `edit`; never guess file contents — check first.\n")
		fmt.Fprintf(&b, "- When a task needs the web, call web_search then web_fetch; cite URLs like <https://example.com/%d>.\n", i)
		fmt.Fprintf(&b, "- Quote exactly: \"%s\" and 'single quotes' & ampersands < > are literal.\n", s)
		fmt.Fprintf(&b, "- Unicode is fine: café, naïve, 日本語, emoji 🦞, arrows → ←, dash — end.\n")
		b.WriteString("```json\n{\"kind\": \"cron\", \"expr\": \"0 9 * * 1-5\", \"tz\": \"Europe/Berlin\"}\n```\n")
		b.WriteString("    Indented line with trailing spaces   \n\tTabbed line\n")
		fmt.Fprintf(&b, "If you have nothing to say, reply with NO_REPLY. Step %d of the checklist: verify, then act.\n", i)
	}
	return b.String()
}

// openclawMessages is an OpenClaw request body's messages, as wire JSON.
func openclawMessages(systemChars int) []json.RawMessage {
	type fn struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	type call struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function fn     `json:"function"`
	}
	msg := func(v map[string]any) json.RawMessage {
		b, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		return b
	}
	return []json.RawMessage{
		msg(map[string]any{"role": "system", "content": openclawSystemPrompt(systemChars)}),
		msg(map[string]any{"role": "user", "content": "Runtime: host=lobster os=linux arch=x64 node=v24.21.0 model=clawrl/qwen3 sessionId=6f1c2a9e-3b7d-4e2f-9a1c-0d5e8b7f4a21 channel=cli\n\nWhat's in my todo file? Summarise it."}),
		msg(map[string]any{"role": "assistant", "content": nil, "tool_calls": []call{{ID: "call0a1b2c3d", Type: "function", Function: fn{Name: "read", Arguments: `{"path": "TODO.md"}`}}}}),
		msg(map[string]any{"role": "tool", "tool_call_id": "call0a1b2c3d", "content": "# TODO\n- [ ] renew passport (due 2026-12-01)\n- [x] call the plumber\n- [ ] write \"quarterly\" report <draft>\n"}),
		msg(map[string]any{"role": "assistant", "content": nil, "tool_calls": []call{
			{ID: "call4e5f6a7b", Type: "function", Function: fn{Name: "memory_search", Arguments: `{"query":"passport renewal","maxResults":3}`}},
			{ID: "call8c9d0e1f", Type: "function", Function: fn{Name: "exec", Arguments: `{"command": "grep -n 'report' -r notes/ | head -5", "timeout": 30, "env": {"LANG": "C"}}`}},
		}}),
		msg(map[string]any{"role": "tool", "tool_call_id": "call4e5f6a7b", "content": `[{"path":"memory/2026-10.md","lines":"12-14","snippet":"Passport: appointment booked for Nov 28 ✈"}]`}),
		msg(map[string]any{"role": "tool", "tool_call_id": "call8c9d0e1f", "content": "notes/work.md:3:quarterly report — numbers from finance\n"}),
		msg(map[string]any{"role": "assistant", "content": "You have two open items:\n\n1. Renew your passport (due Dec 1) — the appointment is on Nov 28.\n2. Write the quarterly report; finance has the numbers.\n\nThe plumber call is done."}),
		msg(map[string]any{"role": "user", "content": "Great. Remind me about the passport tomorrow at 9."}),
		msg(map[string]any{"role": "user", "content": "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>\nCurrent time: Saturday, November 21st, 2026 — 06:12 (Europe/Berlin)\nReply in the same channel. Do not mention this block.\n<<<END_OPENCLAW_INTERNAL_CONTEXT>>>"}),
	}
}
