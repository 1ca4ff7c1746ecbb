package storetest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/store"
)

// crashDirEnv, when set, makes the re-executed test binary the crash child:
// it opens the store at that directory and inserts turns until killed.
const crashDirEnv = "CLAWRL_STORETEST_CRASH_DIR"

// IntegrityChecker is implemented by stores that can verify their files
// (SQLite's PRAGMA integrity_check).
type IntegrityChecker interface {
	IntegrityCheck(ctx context.Context) error
}

// RunCrash checks that a turn is durable once InsertTurn returns: it re-runs
// the calling test in a child process that inserts turns from several
// goroutines and prints each committed id, kills it with SIGKILL mid-way,
// reopens the store and requires every reported id to be present (and the
// store's integrity check, if it has one, to pass).
//
// Call it from its own top-level test: the child re-runs exactly that test.
func RunCrash(t *testing.T, open Opener) {
	if dir := os.Getenv(crashDirEnv); dir != "" {
		crashChild(t, open, dir)
		return
	}
	if testing.Short() {
		t.Skip("crash test re-executes the test binary; skipped in -short")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.count=1", "-test.v=false")
	cmd.Env = append(os.Environ(), crashDirEnv+"="+dir)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start crash child: %v", err)
	}
	const killAfter = 300
	committed, observed := map[string]bool{}, map[string]bool{}
	sc := bufio.NewScanner(stdout)
	killed := false
	for sc.Scan() {
		if id, ok := strings.CutPrefix(sc.Text(), "observed "); ok {
			observed[id] = true
			continue
		}
		id, ok := strings.CutPrefix(sc.Text(), "committed ")
		if !ok {
			continue
		}
		committed[id] = true
		if len(committed) == killAfter && !killed {
			// Kill mid-stream: other goroutines are inside InsertTurn now.
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatalf("kill crash child: %v", err)
			}
			killed = true
		}
	}
	// Lines the child wrote before it died are still in the pipe; the
	// scanner has read them all. A torn last line has no prefix match.
	_ = cmd.Wait()
	if !killed {
		t.Fatalf("crash child exited after %d commits before it was killed", len(committed))
	}
	s := open(t, dir)
	defer s.Close()
	all, err := s.ListTurns(t.Context(), store.TurnFilter{})
	if err != nil {
		t.Fatalf("list turns after crash: %v", err)
	}
	present := map[string]store.Turn{}
	for _, tr := range all {
		present[tr.ID] = tr
	}
	missing := 0
	for id := range committed {
		if _, ok := present[id]; !ok {
			missing++
			if missing <= 5 {
				t.Errorf("turn %s was reported committed but is missing after the crash", id)
			}
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d committed turns lost", missing, len(committed))
	}
	for id := range observed {
		if tr := present[id]; tr.State != store.Observed || len(tr.NextState) != 1 {
			t.Errorf("turn %s was reported observed but is %s with next state %v after the crash", id, tr.State, tr.NextState)
		}
	}
	t.Logf("child reported %d inserts and %d observations before SIGKILL; store holds %d turns", len(committed), len(observed), len(all))
	if ic, ok := s.(IntegrityChecker); ok {
		if err := ic.IntegrityCheck(t.Context()); err != nil {
			t.Errorf("after crash: %v", err)
		}
	}
	// The reopened store keeps working.
	sess := newSession(t, s, "after-crash")
	insert(t, s, sampleTurn("chatcmpl-after-crash", sess.ID))
}

// crashChild inserts turns until it is killed, printing "committed <id>"
// after each InsertTurn returns, and observes each previous turn, printing
// "observed <id>" after ObserveTurn returns.
func crashChild(t *testing.T, open Opener, dir string) {
	s := open(t, dir)
	var out sync.Mutex
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			sess := store.Session{Key: fmt.Sprintf("crash-%d", w), KeySource: "header"}
			if err := s.CreateSession(context.Background(), &sess); err != nil {
				fmt.Fprintf(os.Stderr, "crash child: %v\n", err)
				os.Exit(2)
			}
			deadline := time.Now().Add(2 * time.Minute)
			for i := 0; time.Now().Before(deadline); i++ {
				tr := sampleTurn(fmt.Sprintf("chatcmpl-crash-%d-%d", w, i), sess.ID)
				if err := s.InsertTurn(context.Background(), &tr); err != nil {
					fmt.Fprintf(os.Stderr, "crash child: %v\n", err)
					os.Exit(2)
				}
				out.Lock()
				// os.Stdout is unbuffered: the line is in the pipe when Write returns.
				fmt.Fprintf(os.Stdout, "committed %s\n", tr.ID)
				out.Unlock()
				if i == 0 {
					continue
				}
				prev := fmt.Sprintf("chatcmpl-crash-%d-%d", w, i-1)
				next := []chat.Message{{Role: chat.RoleUser, Content: "next"}}
				if err := s.ObserveTurn(context.Background(), prev, next, store.NextUser, time.Now()); err != nil {
					fmt.Fprintf(os.Stderr, "crash child: %v\n", err)
					os.Exit(2)
				}
				out.Lock()
				fmt.Fprintf(os.Stdout, "observed %s\n", prev)
				out.Unlock()
			}
		})
	}
	wg.Wait()
	os.Exit(3) // never reached in a healthy run: the parent kills first
}
