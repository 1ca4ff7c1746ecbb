package api

import (
	"testing"

	"github.com/clawrl/clawrl/store"
)

// openTestStore returns the store the gateway tests run on.
func openTestStore(t *testing.T) store.Store {
	t.Helper()
	return newMemStore()
}
