package quant

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// runParallel runs every function exactly once before it returns, with
// concurrent submitters (one holds the pool, the others start goroutines),
// back-to-back regions (helpers spinning) and pauses long enough for them
// to park.
func TestRunParallel(t *testing.T) {
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				var hits [3]atomic.Int32
				fns := []func(){}
				for j := range hits {
					fns = append(fns, func() { hits[j].Add(1) })
				}
				runParallel(fns)
				for j := range hits {
					if n := hits[j].Load(); n != 1 {
						t.Errorf("submitter %d region %d: function %d ran %d times", g, i, j, n)
						return
					}
				}
				if i%50 == 0 {
					time.Sleep(2 * time.Millisecond) // helpers park
				}
			}
		}()
	}
	wg.Wait()
}
