// Package train trains the native Go transformer: a training forward pass that
// keeps the activations the backward pass needs, a backward pass for every
// layer (embedding, RMSNorm, RoPE, grouped-query causal attention with
// optional q/k norms and qkv biases, SwiGLU MLP, LM head with tied weights),
// LoRA adapters or full-weight training, AdamW, gradient clipping and
// accumulation, and checkpoints in PEFT / Hugging Face layout.
//
// Its forward IS package model's forward: every layer runs the function
// the serving engine runs (model.RMSNorm, model.Linear.Forward,
// model.LoRA.Forward, model.RopeTable.Apply, model.AttendOne, model.SwiGLU,
// model.Residual, model.LogSumExp), in the same order, keeping the
// activations the backward needs. So π_old recomputed here equals the
// behaviour log-probabilities engine/native recorded, bit for bit, and PPO
// ratios start at exactly 1 (TestScoreEqualsBehaviourLogprobs). This package
// keeps the backward passes, one file per layer (rmsnorm.go, rope.go,
// attention.go, swiglu.go, embedding.go, linear.go for projections with
// LoRA, lmhead.go); model.go chains forward and backward over a packed
// micro-batch, and every activation buffer is allocated once per token
// budget and reused across steps. Attention keeps only log-sum-exps
// (FlashAttention-style tiled backward) and the LM head works in bounded row
// chunks, so long prompts and a 152k vocabulary fit in memory.
//
// The trainer knows nothing about rewards: a step takes sequences and an
// Objective that turns per-token log-probabilities (and entropies) into a
// loss and its gradient per token. The RL losses live in package rl
// (rl.LossConfig, rl.PolicyStep, rl.NativeTrainer).
//
// Use:
//
//	m, _ := model.Load(dir)                 // or LoadWeights(dir)
//	w, _ := train.FromModel(m, false)       // LoRA: shares the model's base weights
//	tr, _ := train.New(w, train.Config{})   // LoRA r16/α32 on all projections, AdamW 1e-4
//	scores, _ := tr.Score(ctx, seqs)        // per-token logprobs and entropies (π_old)
//	st, _ := tr.Step(ctx, seqs, objective)  // forward+backward over micro-batches, clip, AdamW
//	_ = tr.SaveCheckpoint(out)              // adapter (PEFT) + optimizer.safetensors + trainer_state.json
//
// A Trainer is not safe for concurrent use: Score and Step share its
// buffers. The model it was built from may keep serving concurrently in
// LoRA mode (the base weights are only read).
package train
