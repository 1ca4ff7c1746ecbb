package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// Stats are a runner's progress: episodes running and done, success rate
// and reward, overall and per policy version (the version of an episode's
// first step).
type Stats struct {
	mu        sync.Mutex
	running   int
	done      int
	failed    int
	groups    int
	successes int
	reward    float64
	byVersion map[int64]*VersionStats
	started_  time.Time
}

// VersionStats summarise the episodes one policy version played.
type VersionStats struct {
	Episodes    int     `json:"episodes"`
	Successes   int     `json:"successes"`
	RewardSum   float64 `json:"reward_sum"`
	SuccessRate float64 `json:"success_rate"`
	MeanReward  float64 `json:"mean_reward"`
}

func newStats() *Stats { return &Stats{byVersion: map[int64]*VersionStats{}, started_: time.Now()} }

func (s *Stats) started() {
	s.mu.Lock()
	s.running++
	s.mu.Unlock()
}

func (s *Stats) finished(ep Episode, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running--
	if err != nil {
		// An episode cut short because the run is stopping did not fail.
		if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			s.failed++
		}
		return
	}
	s.done++
	if ep.Evaluation.Success {
		s.successes++
	}
	s.reward += ep.Reward
	var v int64
	if len(ep.Steps) > 0 {
		v = ep.Steps[0].PolicyVersion
	}
	vs := s.byVersion[v]
	if vs == nil {
		vs = &VersionStats{}
		s.byVersion[v] = vs
	}
	vs.Episodes++
	vs.RewardSum += ep.Reward
	if ep.Evaluation.Success {
		vs.Successes++
	}
}

func (s *Stats) groupDone() {
	s.mu.Lock()
	s.groups++
	s.mu.Unlock()
}

// Snapshot is what `clawrl status` and /metrics show.
type Snapshot struct {
	Env         string                  `json:"env,omitempty"`
	Running     int                     `json:"episodes_running"`
	Done        int                     `json:"episodes_done"`
	Failed      int                     `json:"episodes_failed"`
	Groups      int                     `json:"groups_done"`
	Successes   int                     `json:"successes"`
	SuccessRate float64                 `json:"success_rate"`
	MeanReward  float64                 `json:"mean_reward"`
	ByVersion   map[string]VersionStats `json:"by_version"`
	Updated     time.Time               `json:"updated"`
	Elapsed     string                  `json:"elapsed"`
}

// Snapshot copies the counters.
func (s *Stats) Snapshot() Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := Snapshot{Running: s.running, Done: s.done, Failed: s.failed, Groups: s.groups, Successes: s.successes,
		ByVersion: map[string]VersionStats{}, Updated: time.Now(), Elapsed: time.Since(s.started_).Round(time.Second).String()}
	if s.done > 0 {
		out.SuccessRate = float64(s.successes) / float64(s.done)
		out.MeanReward = s.reward / float64(s.done)
	}
	for _, v := range slices.Sorted(maps.Keys(s.byVersion)) {
		vs := *s.byVersion[v]
		vs.SuccessRate = float64(vs.Successes) / float64(vs.Episodes)
		vs.MeanReward = vs.RewardSum / float64(vs.Episodes)
		out.ByVersion[fmt.Sprintf("v%d", v)] = vs
	}
	return out
}

// StatusFile is where a running `clawrl agent train` keeps its progress
// for `clawrl status`, in the data folder.
const StatusFile = "agent-status.json"

// WriteStatus writes the snapshot atomically to dir/StatusFile.
func WriteStatus(dir string, snap Snapshot) error {
	b, err := json.MarshalIndent(snap, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, StatusFile+".*.tmp")
	if err != nil {
		return fmt.Errorf("agent status: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(f.Name())
		return fmt.Errorf("agent status: %w", err)
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("agent status: %w", err)
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return fmt.Errorf("agent status: %w", err)
	}
	return os.Rename(f.Name(), filepath.Join(dir, StatusFile))
}

// ReadStatus reads dir/StatusFile; ok is false when there is none.
func ReadStatus(dir string) (snap Snapshot, ok bool, err error) {
	b, err := os.ReadFile(filepath.Join(dir, StatusFile))
	if os.IsNotExist(err) {
		return Snapshot{}, false, nil
	}
	if err != nil {
		return Snapshot{}, false, fmt.Errorf("agent status: %w", err)
	}
	if err := json.Unmarshal(b, &snap); err != nil {
		return Snapshot{}, false, fmt.Errorf("agent status %s: %w", filepath.Join(dir, StatusFile), err)
	}
	return snap, true, nil
}

// Wilson is the Wilson score interval of k successes in n trials at 95 %.
func Wilson(k, n int) (lo, hi float64) {
	if n == 0 {
		return 0, 1
	}
	const z = 1.959963984540054
	p := float64(k) / float64(n)
	nf := float64(n)
	den := 1 + z*z/nf
	centre := (p + z*z/(2*nf)) / den
	half := z * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf)) / den
	return max(0, centre-half), min(1, centre+half)
}
