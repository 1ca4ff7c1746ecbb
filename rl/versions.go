package rl

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

var errNoPublisher = errors.New("engine takes no adapter versions")

// Versions is the directory of published adapter versions: one folder per
// version, v000001, v000002, …, each a PEFT adapter plus optimizer state. A
// version is written into a temporary folder and renamed into place, so a
// crash never leaves a half-written version under its final name; the Store
// records which versions exist, so a renamed folder the Store never recorded
// (a crash between rename and commit) is removed on recovery.
type Versions struct {
	Dir string
}

// Path is where version v lives.
func (vs Versions) Path(v int64) string {
	return filepath.Join(vs.Dir, fmt.Sprintf("v%06d", v))
}

// Write calls save on a fresh temporary folder and renames it to Path(v).
func (vs Versions) Write(v int64, save func(dir string) error) (string, error) {
	if err := os.MkdirAll(vs.Dir, 0o755); err != nil {
		return "", fmt.Errorf("versions dir %s: %w", vs.Dir, err)
	}
	tmp, err := os.MkdirTemp(vs.Dir, fmt.Sprintf(".tmp-v%06d-", v))
	if err != nil {
		return "", fmt.Errorf("version %d: %w", v, err)
	}
	if err := save(tmp); err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("version %d: save into %s: %w", v, tmp, err)
	}
	if err := syncTree(tmp); err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("version %d: %w", v, err)
	}
	final := vs.Path(v)
	// A leftover final folder can only be an unrecorded one from a crash.
	if err := os.RemoveAll(final); err != nil {
		return "", fmt.Errorf("version %d: remove leftover %s: %w", v, final, err)
	}
	if err := os.Rename(tmp, final); err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("version %d: rename %s → %s: %w", v, tmp, final, err)
	}
	if err := syncDir(vs.Dir); err != nil {
		return "", fmt.Errorf("version %d: %w", v, err)
	}
	return final, nil
}

// Clean removes temporary folders and every version folder newer than latest
// (written, never recorded).
func (vs Versions) Clean(latest int64) ([]string, error) {
	entries, err := os.ReadDir(vs.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("clean versions dir %s: %w", vs.Dir, err)
	}
	var removed []string
	for _, e := range entries {
		name := e.Name()
		drop := strings.HasPrefix(name, ".tmp-v")
		if n, ok := strings.CutPrefix(name, "v"); ok {
			if v, err := strconv.ParseInt(n, 10, 64); err == nil && v > latest {
				drop = true
			}
		}
		if drop {
			p := filepath.Join(vs.Dir, name)
			if err := os.RemoveAll(p); err != nil {
				return removed, fmt.Errorf("clean versions dir: %w", err)
			}
			removed = append(removed, p)
		}
	}
	return removed, nil
}

func syncTree(dir string) error {
	return filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return syncDir(p)
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := f.Sync(); err != nil {
			return fmt.Errorf("sync %s: %w", p, err)
		}
		return nil
	})
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
