// Package model is clawrl's transformer: Hugging Face checkpoints of the
// Qwen3, Qwen2 and Llama families loaded from safetensors, a forward pass
// written layer by layer, a KV cache per sequence, batched decoding of many
// sequences at once, sampling with logprobs, scoring, and PEFT LoRA adapters
// chosen per request.
//
// # Using it
//
//	m, err := model.Load(dir)               // config.json + *.safetensors
//	ad, err := m.LoadAdapter(adapterDir)    // PEFT layout; nil = base weights
//	seq := m.NewSequence()                  // one KV cache
//	logits, err := m.Prefill(ctx, seq, promptIDs, ad)
//	id, logprob := model.Sample(logits, model.SamplingParams{Temperature: 0.7, TopP: 0.9}, rng)
//	all, err := m.DecodeStep([]*model.Sequence{seq, other}, []int32{id, id2}, []*model.Adapter{ad, nil})
//	lps, err := m.Score(ctx, promptIDs, completionIDs, ad) // one prefill
//	outs, err := m.Step(ctx, []model.Chunk{{Seq: a, IDs: prompt}, {Seq: b, IDs: []int32{id}}}) // mixed
//
// Sequence.Tokens, Truncate and Clone let an engine keep caches between
// requests and prefill only what a new prompt adds to a cached prefix.
//
// A Model and its Adapters are read-only and safe to share between
// goroutines; a Sequence belongs to one caller at a time. Sample's logprob
// is the log-softmax of the raw logits (before temperature, top-k, top-p),
// the quantity Score returns and the trainer recomputes.
//
// With the pure-Go kernels a sequence's numbers are bitwise the same
// whether it is decoded alone or batched with others, and whether its
// logprobs come from Sample during decoding or from Score; bf16 weights
// kept in bf16 give bitwise the results of widening them to f32.
//
// # Layout
//
// One file per concern, each layer a function over explicit buffers (llm.c
// style), so a backward pass can sit beside each forward: embedding.go
// (lookup and output head), rmsnorm.go, rope.go (Hugging Face's rotate_half
// layout, llama3 scaling), attention.go (grouped-query, causal, against the
// cache), mlp.go (SwiGLU), matmul.go (Linear, f32 or bf16 weights), lora.go
// (adapters: load, save, new, applied beside the base matmul), forward.go
// (the decoder stack over a batch of rows, Prefill, DecodeStep, Logits),
// kvcache.go, sample.go, score.go, config.go, weights.go, random.go (random
// checkpoints for tests and benchmarks, as `clawrl model new` writes them).
//
// Parity with transformers and PEFT is checked against fixtures made by
// testdata/gen_parity.py.
package model
