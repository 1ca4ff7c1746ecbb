//go:build !linux

package model

import "time"

func processCPU() time.Duration { return 0 }
