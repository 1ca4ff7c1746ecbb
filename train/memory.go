package train

import (
	"sync"

	"github.com/clawrl/clawrl/internal/memlimit"
)

// DefaultActivationBudget is Config.ActivationBudget's default: a quarter
// of the memory the process may use (memlimit.Available: the machine's, or
// its cgroup's where lower; 4 GiB where neither can be read). The
// trainer shares the machine with the model it serves, a judge or teacher
// and their caches; a step that keeps all of a large model's activations
// (12 GB for Qwen2.5-1.5B over 3,040 tokens) would leave them too little.
func DefaultActivationBudget() int64 {
	if m := available(); m > 0 {
		return m / 4
	}
	return 4 << 30
}

var available = sync.OnceValue(memlimit.Available)

// ActivationBudgetFlag is the help text of the commands' activation-budget
// flag, whose value BudgetFromMiB reads.
const ActivationBudgetFlag = "MiB of activations a native trainer micro-batch keeps for the backward (--train-backend torch has --recompute); past it, blocks keep no norm outputs or SwiGLU product and the backward remakes them: the same numbers for a few per cent more compute, a third less memory at Qwen2.5-1.5B's shape (0: a quarter of the memory the process may use; negative: keep everything)"

// BudgetFromMiB is Config.ActivationBudget for a flag in MiB: 0 the
// default, negative no bound.
func BudgetFromMiB(mib int) int64 {
	switch {
	case mib < 0:
		return -1
	case mib == 0:
		return 0
	}
	return int64(mib) << 20
}
