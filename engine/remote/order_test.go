package remote

import (
	"fmt"
	"testing"
)

// TestOrderSpreadsSessions: rendezvous hashing must split sessions between
// replicas whatever their URLs. With FNV-1a alone some pairs of local ports
// sent all of "session-0" … "session-999" to one replica (the cause of a
// flaky failover test, and an unbalanced cluster).
func TestOrderSpreadsSessions(t *testing.T) {
	for p := 0; p < 200; p++ {
		a, b := fmt.Sprintf("http://127.0.0.1:%d", 33000+37*p), fmt.Sprintf("http://127.0.0.1:%d", 45000+53*p)
		e := &Engine{replicas: []*replica{{url: a, loaded: map[string]bool{}}, {url: b, loaded: map[string]bool{}}}}
		first := 0
		for i := range 1000 {
			if e.order(fmt.Sprintf("session-%d", i))[0].url == a {
				first++
			}
		}
		if first < 400 || first > 600 {
			t.Errorf("%s vs %s: %d of 1000 sessions go to the first, want about 500", a, b, first)
		}
	}
	// Three replicas: each gets about a third, and removing one moves only
	// its own sessions.
	urls := []string{"http://10.0.0.1:8000", "http://10.0.0.2:8000", "http://10.0.0.3:8000"}
	e := &Engine{}
	for _, u := range urls {
		e.replicas = append(e.replicas, &replica{url: u, loaded: map[string]bool{}})
	}
	count := map[string]int{}
	before := map[string]string{}
	for i := range 3000 {
		k := fmt.Sprintf("s%d", i)
		u := e.order(k)[0].url
		count[u]++
		before[k] = u
	}
	for _, u := range urls {
		if count[u] < 850 || count[u] > 1150 {
			t.Errorf("%s took %d of 3000 sessions", u, count[u])
		}
	}
	e.replicas = e.replicas[:2]
	for k, u := range before {
		if now := e.order(k)[0].url; u != urls[2] && now != u {
			t.Fatalf("session %s moved from %s to %s when another replica left", k, u, now)
		}
	}
}
