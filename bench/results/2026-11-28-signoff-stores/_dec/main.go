// dec reads lines of comma-separated token ids on stdin and prints each decoded.
package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/clawrl/clawrl/gguf"
	"github.com/clawrl/clawrl/tokenizer"
)

func main() {
	f, err := gguf.Open(os.Args[1])
	if err != nil {
		panic(err)
	}
	tok, err := tokenizer.FromGGUF(f.Header)
	if err != nil {
		panic(err)
	}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var ids []int32
		for _, s := range strings.Split(strings.TrimSpace(sc.Text()), ",") {
			if s == "" {
				continue
			}
			v, _ := strconv.Atoi(s)
			ids = append(ids, int32(v))
		}
		fmt.Printf("%q\n", tok.Decode(ids))
	}
}
