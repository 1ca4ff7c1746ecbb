package train

import "sync"

// DefaultActivationBudget is Config.ActivationBudget's default: a quarter
// of the machine's physical memory (4 GiB where it cannot be read). The
// trainer shares the machine with the model it serves, a judge or teacher
// and their caches; a step that keeps all of a large model's activations
// (12 GB for Qwen2.5-1.5B over 3,040 tokens) would leave them too little.
func DefaultActivationBudget() int64 {
	if m := physicalMemory(); m > 0 {
		return m / 4
	}
	return 4 << 30
}

var physicalMemory = sync.OnceValue(totalMemory)
