package session

import (
	"net/http"
	"strings"
	"unicode/utf8"
)

// maxClientLen bounds the client name kept with a session.
const maxClientLen = 80

// ClientName names the software behind a request from its User-Agent, for
// people reading the session list: an SDK's "OpenAI/Python 1.40.0" stays
// as it is, a browser's long "Mozilla/5.0 (…) … Chrome/120.0 …" becomes
// "browser (Chrome/120.0)". Empty when the request sent none.
func ClientName(h http.Header) string {
	ua := strings.TrimSpace(h.Get("User-Agent"))
	if ua == "" {
		return ""
	}
	if strings.HasPrefix(ua, "Mozilla/") {
		// Browsers list several products; the most specific one names
		// the browser (Edge's and Opera's UAs also say Chrome and Safari,
		// Chrome's also says Safari).
		name, rank := "", 0
		for _, tok := range strings.Fields(ua) {
			for i, p := range []string{"Safari/", "Chrome/", "HeadlessChrome/", "Firefox/", "Edg/", "OPR/"} {
				if strings.HasPrefix(tok, p) && i+1 > rank {
					name, rank = tok, i+1
				}
			}
		}
		if name == "" {
			return "browser"
		}
		ua = "browser (" + name + ")"
	}
	if len(ua) > maxClientLen {
		ua = ua[:maxClientLen]
		for !utf8.ValidString(ua) {
			ua = ua[:len(ua)-1]
		}
	}
	return strings.ToValidUTF8(ua, "")
}
