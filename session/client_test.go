package session

import (
	"net/http"
	"strings"
	"testing"
)

func TestClientName(t *testing.T) {
	cases := []struct{ ua, want string }{
		{"", ""},
		{"OpenAI/Python 1.40.0", "OpenAI/Python 1.40.0"},
		{"curl/8.5.0", "curl/8.5.0"},
		{"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36", "browser (Chrome/120.0.0.0)"},
		{"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36", "browser (HeadlessChrome/131.0.0.0)"},
		{"Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0", "browser (Firefox/128.0)"},
		{"Mozilla/5.0 (Windows NT 10.0) AppleWebKit/537.36 Chrome/120.0 Safari/537.36 Edg/120.0", "browser (Edg/120.0)"},
		{"Mozilla/5.0 (compatible)", "browser"},
		{strings.Repeat("é", 100), strings.Repeat("é", 40)},
	}
	for _, c := range cases {
		h := http.Header{}
		if c.ua != "" {
			h.Set("User-Agent", c.ua)
		}
		if got := ClientName(h); got != c.want {
			t.Errorf("ClientName(%q) = %q, want %q", c.ua, got, c.want)
		}
	}
	if got := ClientName(nil); got != "" {
		t.Errorf("ClientName(nil) = %q", got)
	}
}
