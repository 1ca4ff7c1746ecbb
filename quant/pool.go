package quant

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// A decode step of a small model is hundreds of short fork-join regions
// (each of a layer's matmuls is tens of microseconds), and starting a
// goroutine per region costs a thread wake-up each time, a real share of
// the step. As llama.cpp's thread pool does, the pool's helpers stay
// alive and spin for a short while after each job before parking, so
// back-to-back regions hand over in well under a microsecond; a helper
// idle longer than the spin parks and costs nothing.

// spinIters is how long a helper (or a waiting submitter) spins before
// parking: about 50–150 µs of PAUSE loops.
const spinIters = 2000

type helper struct {
	seq     atomic.Uint64 // last job published
	done    atomic.Uint64 // last job finished
	fn      func()        // the job; written before seq, read after it
	parked  atomic.Bool   // the helper waits on wake
	waiting atomic.Bool   // the submitter waits on finished
	wake    chan struct{}
	fin     chan struct{}
}

func (h *helper) loop() {
	var last uint64
	for {
		for spins := 0; h.seq.Load() == last; spins++ {
			if spins < spinIters {
				spinPause()
				continue
			}
			h.parked.Store(true)
			if h.seq.Load() == last {
				<-h.wake
			}
			h.parked.Store(false)
		}
		last = h.seq.Load()
		fn := h.fn
		h.fn = nil
		fn()
		h.done.Store(last)
		if h.waiting.Load() {
			select {
			case h.fin <- struct{}{}:
			default:
			}
		}
	}
}

// start publishes fn as the helper's next job.
func (h *helper) start(fn func()) uint64 {
	h.fn = fn
	s := h.seq.Add(1)
	if h.parked.Load() {
		select {
		case h.wake <- struct{}{}:
		default:
		}
	}
	return s
}

// wait returns once job s has finished.
func (h *helper) wait(s uint64) {
	for spins := 0; h.done.Load() != s; spins++ {
		if spins < spinIters {
			spinPause()
			continue
		}
		h.waiting.Store(true)
		if h.done.Load() != s {
			<-h.fin
		}
		h.waiting.Store(false)
	}
}

// pool is the process's helpers; one submitter at a time holds mu (a
// concurrent one starts goroutines instead).
var pool struct {
	mu      sync.Mutex
	helpers []*helper
}

// Parallel runs fns[0] on the calling goroutine and the others
// concurrently on the pool's helpers, and returns when all have finished:
// for other per-token fork-join work (the engine's attention) to share the
// spinning helpers.
func Parallel(fns []func()) { runParallel(fns) }

// runParallel is Parallel.
func runParallel(fns []func()) {
	if len(fns) == 1 {
		fns[0]()
		return
	}
	if !pool.mu.TryLock() {
		var wg sync.WaitGroup
		for _, fn := range fns[1:] {
			wg.Add(1)
			go func() {
				defer wg.Done()
				fn()
			}()
		}
		fns[0]()
		wg.Wait()
		return
	}
	defer pool.mu.Unlock()
	for len(pool.helpers) < len(fns)-1 {
		h := &helper{wake: make(chan struct{}, 1), fin: make(chan struct{}, 1)}
		go h.loop()
		pool.helpers = append(pool.helpers, h)
	}
	var buf [64]uint64
	seqs := buf[:0]
	if len(fns) > len(buf) {
		seqs = make([]uint64, 0, len(fns))
	}
	for i, fn := range fns[1:] {
		seqs = append(seqs, pool.helpers[i].start(fn))
	}
	fns[0]()
	for i := range fns[1:] {
		pool.helpers[i].wait(seqs[i])
	}
}

// maxWorkers is how many goroutines one region uses.
func maxWorkers() int { return runtime.GOMAXPROCS(0) }
