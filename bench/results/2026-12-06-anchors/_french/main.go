// Command _french scores held-out answers as the french persona does
// (bench.Persona.Satisfied: French, and neither looping nor evading the
// question): it reads JSON lines {"q": question, "a": answer} on standard
// input and prints each answer's verdict, then how many are French, how
// many satisfy the persona, and their mean length in words.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/clawrl/clawrl/bench"
	"github.com/clawrl/clawrl/rl"
)

func main() {
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n, fr, sat, words := 0, 0, 0, 0
	for sc.Scan() {
		var l struct{ Q, A string }
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		n++
		words += len(strings.Fields(l.A))
		french := bench.French(l.A)
		ok := french && !rl.Loops(l.A) && !bench.Evades(l.A)
		if french {
			fr++
		}
		if ok {
			sat++
		}
		fmt.Printf("%-5v %-40.40q %.110q\n", ok, l.Q, l.A)
	}
	if n == 0 {
		fmt.Fprintln(os.Stderr, "no answers")
		os.Exit(1)
	}
	fmt.Printf("french %d, satisfied %d of %d, %.1f words\n", fr, sat, n, float64(words)/float64(n))
}
