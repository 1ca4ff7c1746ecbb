package ui

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The learning page draws the satisfaction and retention curves of `clawrl
// bench learn` runs from result files in Config.BenchDir (serve passes
// DATA/bench/learn). A file is JSON holding the per-arm summary, as bench
// learn writes it: either
//
//	{"summary": [ARM, …], …}   (or "arms")     or     [ARM, …]
//
// where ARM is {"arm": "combine", "cells": [{"round": 0, "runs": 3,
// "satisfied": {"k","n","p","low","high"}, "retention": {…}}, …]}: a
// proportion with its 95 % interval per round. Other fields are ignored.

// Bounds on what the page reads: the newest files first.
const (
	maxBenchFiles = 12
	maxBenchBytes = 16 << 20
)

type proportion struct {
	K    int     `json:"k"`
	N    int     `json:"n"`
	P    float64 `json:"p"`
	Low  float64 `json:"low"`
	High float64 `json:"high"`
}

type benchCell struct {
	Round     int         `json:"round"`
	Runs      int         `json:"runs"`
	Satisfied *proportion `json:"satisfied"`
	Retention *proportion `json:"retention"`
}

type benchArm struct {
	Arm   string      `json:"arm"`
	Cells []benchCell `json:"cells"`
}

type benchRun struct {
	File     string     `json:"file"`
	Modified string     `json:"modified"`
	Arms     []benchArm `json:"arms"`
}

// parseBench reads one result file's arms.
func parseBench(b []byte) ([]benchArm, error) {
	var arms []benchArm
	trimmed := strings.TrimSpace(string(b))
	if strings.HasPrefix(trimmed, "[") {
		if err := json.Unmarshal(b, &arms); err != nil {
			return nil, err
		}
	} else {
		var doc struct {
			Summary []benchArm `json:"summary"`
			Arms    []benchArm `json:"arms"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			return nil, err
		}
		arms = doc.Summary
		if len(arms) == 0 {
			arms = doc.Arms
		}
	}
	arms = slices.DeleteFunc(arms, func(a benchArm) bool { return a.Arm == "" || len(a.Cells) == 0 })
	if len(arms) == 0 {
		return nil, errors.New("no arms with cells (want {\"summary\": [{\"arm\", \"cells\": […]}]})")
	}
	for _, a := range arms {
		for _, c := range a.Cells {
			for _, p := range []*proportion{c.Satisfied, c.Retention} {
				if p != nil && (p.P < 0 || p.P > 1 || p.Low < 0 || p.High > 1 || p.N < 0) {
					return nil, fmt.Errorf("arm %q round %d: a proportion outside [0, 1]", a.Arm, c.Round)
				}
			}
		}
	}
	return arms, nil
}

// loadBench reads the result files in dir, newest first. A missing dir has
// none; a file that does not parse is reported, and the others still load.
func loadBench(dir string) ([]benchRun, error) {
	if dir == "" {
		return []benchRun{}, nil
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return []benchRun{}, nil
	}
	if err != nil {
		return []benchRun{}, fmt.Errorf("bench results in %s: %w", dir, err)
	}
	type file struct {
		name string
		info fs.FileInfo
	}
	var files []file
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		if info, err := e.Info(); err == nil {
			files = append(files, file{e.Name(), info})
		}
	}
	slices.SortFunc(files, func(a, b file) int { return b.info.ModTime().Compare(a.info.ModTime()) })
	runs := []benchRun{}
	var errs []error
	for _, f := range files[:min(len(files), maxBenchFiles)] {
		if f.info.Size() > maxBenchBytes {
			errs = append(errs, fmt.Errorf("%s: %d bytes, at most %d", f.name, f.info.Size(), maxBenchBytes))
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, f.name))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		arms, err := parseBench(b)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", f.name, err))
			continue
		}
		runs = append(runs, benchRun{File: f.name, Modified: stamp(f.info.ModTime()), Arms: arms})
	}
	return runs, errors.Join(errs...)
}
