//go:build ignore

// The 1.5B's logits on the int8 path, hashed: run it from a package inside
// the module (mkdir internal/amxcheck_tmp; cp this file there without the
// build line; go test -c -o check.test ./internal/amxcheck_tmp), then
// GGUF=…/Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf ./check.test -test.run Hash
// with and without CLAWRL_AMX=0, and with a binary built at 9b0cad7
// (check.txt).
package amxcheck

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/clawrl/clawrl/model"
)

// Logits at every position of a 40- and a 190-token prompt, SHA-256 of
// their bits.
func TestHash(t *testing.T) {
	m, err := model.LoadWith(os.Getenv("GGUF"), model.Options{WeightDType: "quant"})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{40, 190} {
		ids := make([]int32, n)
		for i := range ids {
			ids[i] = int32((i*7919 + 13) % 30000)
		}
		lg, err := m.Logits(context.Background(), ids, nil)
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		var b [4]byte
		for _, v := range lg {
			binary.LittleEndian.PutUint32(b[:], math.Float32bits(v))
			h.Write(b[:])
		}
		fmt.Printf("n=%d len=%d sha256=%x\n", n, len(lg), h.Sum(nil)[:8])
	}
}
