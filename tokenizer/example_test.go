package tokenizer_test

import (
	"fmt"

	"github.com/clawrl/clawrl/tokenizer"
	"github.com/clawrl/clawrl/tokenizer/vocab"
)

func Example() {
	data, _, err := vocab.Files("qwen3") // or tokenizer.Load("model/tokenizer.json")
	if err != nil {
		panic(err)
	}
	tok, err := tokenizer.FromJSON(data)
	if err != nil {
		panic(err)
	}
	ids := tok.Encode("<|im_start|>user\nHello world<|im_end|>\n")
	fmt.Println(ids)
	fmt.Printf("%q\n", tok.Decode(ids))
	fmt.Printf("%q\n", tok.DecodeSkipSpecial(ids))

	// Streaming: text comes out only when whole characters are complete.
	d := tok.NewDecoder()
	for _, id := range tok.Encode("a𨾶b") { // 𨾶 is 4 bytes in 3 tokens
		fmt.Printf("%q ", d.Add(id))
	}
	fmt.Printf("%q\n", d.Flush())
	end, _ := tok.TokenID("<|im_end|>")
	fmt.Println(end, tok.IsSpecial(end), tok.VocabSize())
	// Output:
	// [151644 872 198 9707 1879 151645 198]
	// "<|im_start|>user\nHello world<|im_end|>\n"
	// "user\nHello world\n"
	// "a" "" "" "𨾶" "b" ""
	// 151645 true 151669
}
