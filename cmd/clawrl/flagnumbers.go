package main

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/spf13/pflag"
)

// negativeMeans names the numeric flags for which a value below zero means
// something (each says what in its help): seeds, "-1: no bound", "negative:
// off", and thresholds that are margins.
var negativeMeans = map[string]bool{
	"seed": true, "first-seed": true, "max-queued": true, "activation-budget-mib": true, "max-grad-norm": true,
	"judge-threshold": true, "teacher-select-threshold": true, "select-threshold": true,
}

// checkNumberFlags refuses, on every command, the numbers a person gives
// that no flag means: below zero (a count, a size, a rate, a weight, a time)
// where negativeMeans does not say otherwise, and NaN or ±Inf anywhere. Each
// command still checks its own narrower rules; these would otherwise be
// taken silently as a default or reach a computation as such.
func checkNumberFlags(fs *pflag.FlagSet) error {
	var err error
	fs.Visit(func(f *pflag.Flag) { // only the flags given
		if err != nil {
			return
		}
		v, ok := flagNumber(f)
		switch {
		case !ok:
		case math.IsNaN(v) || math.IsInf(v, 0):
			err = fmt.Errorf("--%s %s: want a finite number", f.Name, f.Value.String())
		case v < 0 && !negativeMeans[f.Name]:
			err = fmt.Errorf("--%s %s: want a number ≥ 0 (a negative one means nothing here)", f.Name, f.Value.String())
		}
	})
	return err
}

// flagNumber reads a numeric flag's value; ok is false for other flags.
func flagNumber(f *pflag.Flag) (float64, bool) {
	s := f.Value.String()
	switch f.Value.Type() {
	case "int", "int8", "int16", "int32", "int64":
		n, err := strconv.ParseInt(s, 10, 64)
		return float64(n), err == nil
	case "float32", "float64":
		x, err := strconv.ParseFloat(s, 64)
		return x, err == nil
	case "duration":
		d, err := time.ParseDuration(s)
		return float64(d), err == nil
	}
	return 0, false
}
