package sglang

import (
	"errors"
	"os"
	"testing"
	"time"
)

var tempRoot string

func TestMain(m *testing.M) {
	code := m.Run()
	if tempRoot != "" {
		os.RemoveAll(tempRoot) //nolint:errcheck // a temp folder
	}
	os.Exit(code)
}

// osMkdirTemp makes the folder of the shared checkpoint (outliving any one
// test, removed by TestMain).
func osMkdirTemp() (string, error) {
	var err error
	tempRoot, err = os.MkdirTemp("", "clawrl-sglang-")
	return tempRoot, err
}

func sleep() { time.Sleep(10 * time.Millisecond) }

func errorsAs(err error, target any) bool { return errors.As(err, target) }
