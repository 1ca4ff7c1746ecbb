package session

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/store"
)

// Why a turn was classified as it was (for logs and metrics).
const (
	ReasonExplicit   = "explicit"
	ReasonCompaction = "compaction"
	ReasonHeartbeat  = "heartbeat"
	ReasonTitle      = "title"
	ReasonMemory     = "memory_flush"
	ReasonDefault    = "default"
)

var (
	summariseRE = regexp.MustCompile(`(?i)\b(summari[sz](e|es|ed|ing|ation)|summary|compact(ion|ing)?|condens(e|ing))\b`)
	contextRE   = regexp.MustCompile(`(?i)\b(conversation|context|history|messages|transcript|session)\b`)
	titleRE     = regexp.MustCompile(`(?i)\b(generate|write|create|suggest|give)\b[^.\n]{0,60}\btitle\b`)
)

// Classify applies DESIGN.md's turn-type precedence: header X-Turn-Type or
// body turn_type; else a recognised side call; else main. Side calls are
// recognised by content because OpenClaw sends its static headers on them
// too: summarisation/compaction (no tools, instructions about summarising),
// heartbeats (the heartbeat prompt with HEARTBEAT_OK / NO_REPLY), title
// generation and memory flushes.
func Classify(h Hints, msgs []chat.Message, tools []chat.Tool) (store.TurnType, string, error) {
	explicit := strings.TrimSpace(h.Header.Get("X-Turn-Type"))
	if explicit == "" {
		explicit = strings.TrimSpace(h.TurnType)
	}
	if explicit != "" {
		switch strings.ToLower(explicit) {
		case string(store.Main):
			return store.Main, ReasonExplicit, nil
		case string(store.Side):
			return store.Side, ReasonExplicit, nil
		}
		return "", "", fmt.Errorf("turn type %q: want main or side", explicit)
	}
	var system strings.Builder
	for _, m := range msgs {
		if m.Role == chat.RoleSystem || m.Role == chat.RoleDeveloper {
			system.WriteString(m.Content)
			system.WriteByte('\n')
		}
	}
	// The messages the client added for this turn: the user messages after
	// the last assistant or tool message (OpenClaw puts its internal context
	// block after the user's text).
	var current strings.Builder
	lastUser := ""
	for i := len(msgs) - 1; i >= 0 && msgs[i].Role == chat.RoleUser; i-- {
		current.WriteString(msgs[i].Content)
		current.WriteByte('\n')
		if !isInternalContext(msgs[i]) && lastUser == "" {
			lastUser = msgs[i].Content
		}
	}
	cur := strings.ToLower(current.String())
	if strings.Contains(cur, "heartbeat") && (strings.Contains(cur, "heartbeat_ok") || strings.Contains(cur, "no_reply")) {
		return store.Side, ReasonHeartbeat, nil
	}
	if strings.Contains(cur, "memory flush") {
		return store.Side, ReasonMemory, nil
	}
	if len(tools) == 0 {
		sys := system.String()
		if summariseRE.MatchString(sys) || (summariseRE.MatchString(lastUser) && contextRE.MatchString(lastUser) && sys == "") {
			return store.Side, ReasonCompaction, nil
		}
		if titleRE.MatchString(sys) {
			return store.Side, ReasonTitle, nil
		}
	}
	return store.Main, ReasonDefault, nil
}
