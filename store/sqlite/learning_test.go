package sqlite

import (
	"testing"

	"github.com/clawrl/clawrl/store"
	"github.com/clawrl/clawrl/store/learningtest"
)

func TestLearningConformance(t *testing.T) {
	learningtest.Run(t, func(t *testing.T, dir string) store.LearningStore {
		return openTest(t, dir).(*Store)
	})
}
