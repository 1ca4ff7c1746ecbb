// Package openclaw holds the end-to-end test that a stock, unmodified OpenClaw
// (npm openclaw@2026.9.6, on Node 24 from npm) drives clawrl: real agent
// turns, a compaction, a tool round answered by a real model, and what clawrl
// stored about them. The package has no code of its own; see README.md for
// what OpenClaw sends to a provider and testdata/capture for a recording.
package openclaw
