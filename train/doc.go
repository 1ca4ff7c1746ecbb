// Package train trains the native Go transformer: a training forward pass that
// keeps the activations the backward pass needs, a backward pass for every
// layer (embedding, RMSNorm, RoPE, grouped-query causal attention with
// optional q/k norms and qkv biases, SwiGLU MLP, LM head with tied weights),
// LoRA adapters or full-weight training, AdamW, gradient clipping and
// accumulation, and checkpoints in PEFT / Hugging Face layout.
//
// It reads like llm.c: each layer's forward sits beside its backward in one
// file with the same argument order, and every activation buffer is
// allocated once per token budget and reused across steps.
//
// The trainer knows nothing about rewards: a step takes sequences and an
// Objective that turns per-token log-probabilities (and entropies) into a
// loss and its gradient per token. The RL losses live in package rl.
package train
