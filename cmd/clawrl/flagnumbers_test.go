package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestCheckNumberFlags: on every command, every numeric flag refuses NaN and
// ±Inf, and -1 unless negativeMeans says what a negative value means there
// (and then its help says so too). A flag added later is held to it.
func TestCheckNumberFlags(t *testing.T) {
	checked := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			var bad []string
			switch f.Value.Type() {
			case "int", "int64", "int32":
				bad = []string{"-1"}
			case "float64", "float32":
				bad = []string{"nan", "+Inf", "-Inf", "-1"}
			case "duration":
				bad = []string{"-1s"}
			default:
				return
			}
			checked++
			if negativeMeans[f.Name] {
				bad = bad[:len(bad)-1] // -1 means something here
				if f.Name != "seed" && f.Name != "first-seed" && !strings.Contains(f.Usage, "negative") && !strings.Contains(f.Usage, "-1") &&
					!strings.Contains(f.Usage, "log p(Yes) − log p(No)") {
					t.Errorf("%s --%s takes negatives, but its help does not say what they mean: %q", c.CommandPath(), f.Name, f.Usage)
				}
			}
			for _, v := range bad {
				fs := pflag.NewFlagSet(c.Name(), pflag.ContinueOnError)
				fs.AddFlag(&pflag.Flag{Name: f.Name, Value: newValueLike(t, f), Usage: f.Usage})
				if err := fs.Parse([]string{"--" + f.Name + "=" + v}); err != nil {
					t.Fatalf("%s --%s=%s: %v", c.CommandPath(), f.Name, v, err)
				}
				if err := checkNumberFlags(fs); err == nil || !strings.Contains(err.Error(), "--"+f.Name) {
					t.Errorf("%s --%s=%s: %v, want it refused by name", c.CommandPath(), f.Name, v, err)
				}
			}
			// A flag left at its default is not checked: defaults are trusted.
			if err := checkNumberFlags(c.Flags()); err != nil {
				t.Errorf("%s at its defaults: %v", c.CommandPath(), err)
			}
		})
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(newRootCmd())
	if checked < 100 {
		t.Fatalf("only %d numeric flags found", checked)
	}

	// Wired on the root: a command refuses before it runs.
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs([]string{"agent", "train", "--samples", "-1"})
	if err := root.Execute(); err == nil || !strings.Contains(err.Error(), "--samples -1") {
		t.Fatalf("agent train --samples -1: %v", err)
	}
}

// newValueLike makes a fresh value of f's type (so parsing does not touch
// the command's own variables).
func newValueLike(t *testing.T, f *pflag.Flag) pflag.Value {
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	switch f.Value.Type() {
	case "int":
		fs.Int("v", 0, "")
	case "int32":
		fs.Int32("v", 0, "")
	case "int64":
		fs.Int64("v", 0, "")
	case "float32":
		fs.Float32("v", 0, "")
	case "float64":
		fs.Float64("v", 0, "")
	case "duration":
		fs.Duration("v", 0, "")
	default:
		t.Fatalf("type %s", f.Value.Type())
	}
	return fs.Lookup("v").Value
}
