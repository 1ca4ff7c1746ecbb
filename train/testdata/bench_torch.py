#!/usr/bin/env python3
"""Reference for BenchmarkTrainStep: training tokens/s of transformers + PEFT
(LoRA r16/alpha 32 on q,k,v,o,gate,up,down) or full fine-tuning with
torch.optim.AdamW, one step = forward + backward + optimizer step, float32
on CPU, SFT loss on the response tokens. Batches as in bench_test.go:

- tiny, qwen3-0.6b (Qwen3 shapes): 2 sequences of 64 prompt + 64 response;
- smollm2-135m (SmolLM2-135M's llama shape): 16 sequences of 64 prompt +
  126 response (16 x 190 tokens);
- qwen2.5-coder-0.5b (Qwen2.5-Coder-0.5B-Instruct's Qwen2 shape, random
  weights; BenchmarkStudentStep trains the real GGUF beside it): the same
  16 x 190 batch (--seqs changes the count).

    OMP_WAIT_POLICY=PASSIVE python3 train/testdata/bench_torch.py --threads 2 [--large] [--steps 3] [--only smollm2-135m/lora] [--response-logits] [--autocast-bf16]

The loss is what HF computes for `model(input_ids, labels=labels)`: logits
for every position (3,040 × 49,152 at the SmolLM2 batch), shifted, cross
entropy averaged over the response tokens. --response-logits is the leaner
reference: `model(input_ids, logits_to_keep=positions)` with the positions
that predict a response token (16 × 126 rows, as clawrl's LM head), and the
same cross entropy taken on them.

--autocast-bf16 runs forward and backward under torch.autocast("cpu",
dtype=torch.bfloat16) (its matmuls in bf16 with float32 accumulation; the
weights, gradients and AdamW stay float32): the bf16 reference for
clawrl's --train-precision bf16, whose forward stays float32.

Prints one line per (shape, mode): tokens/s and peak RSS (MB, whole process).
"""
import argparse
import resource
import time

import torch
from peft import LoraConfig, get_peft_model
from transformers import LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM, Qwen3Config, Qwen3ForCausalLM

QWEN3 = dict(vocab_size=151936, rms_norm_eps=1e-6, rope_theta=1e6, tie_word_embeddings=True)
SHAPES = {
    # name: (config class, model class, config, sequences, prompt, response, large)
    "tiny": (Qwen3Config, Qwen3ForCausalLM, dict(QWEN3, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                                 num_attention_heads=4, num_key_value_heads=2, head_dim=16), 2, 64, 64, False),
    "smollm2-135m": (LlamaConfig, LlamaForCausalLM, dict(vocab_size=49152, hidden_size=576, intermediate_size=1536,
                                                         num_hidden_layers=30, num_attention_heads=9, num_key_value_heads=3,
                                                         head_dim=64, rms_norm_eps=1e-5, rope_theta=100000,
                                                         tie_word_embeddings=True), 16, 64, 126, False),
    "qwen3-0.6b": (Qwen3Config, Qwen3ForCausalLM, dict(QWEN3, hidden_size=1024, intermediate_size=3072, num_hidden_layers=28,
                                                       num_attention_heads=16, num_key_value_heads=8, head_dim=128), 2, 64, 64, True),
    "qwen2.5-coder-0.5b": (Qwen2Config, Qwen2ForCausalLM, dict(QWEN3, hidden_size=896, intermediate_size=4864,
                                                               num_hidden_layers=24, num_attention_heads=14,
                                                               num_key_value_heads=2), 16, 64, 126, True),
}


def bench(shape, mode, steps, response_logits=False, seqs=0, autocast=False):
    cfg_cls, model_cls, kw, nseq, prompt, response, _ = SHAPES[shape]
    nseq = seqs or nseq
    cfg = cfg_cls(**kw)
    torch.manual_seed(0)
    m = model_cls(cfg).float()
    if mode == "lora":
        m = get_peft_model(m, LoraConfig(r=16, lora_alpha=32, lora_dropout=0.0, task_type="CAUSAL_LM",
                                         target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]))
        lr = 1e-4
    else:
        lr = 1e-5
    m.train()
    params = [p for p in m.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=lr, betas=(0.9, 0.98), eps=1e-8, weight_decay=0.1)
    ids = torch.randint(0, cfg.vocab_size, (nseq, prompt + response))
    labels = ids.clone()
    labels[:, :prompt] = -100

    keep = torch.arange(prompt - 1, prompt + response - 1)
    targets = ids[:, prompt:].reshape(-1)

    def step():
        opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            if response_logits:
                out = m(input_ids=ids, logits_to_keep=keep)
                loss = torch.nn.functional.cross_entropy(out.logits.reshape(-1, cfg.vocab_size).float(), targets)
            else:
                loss = m(input_ids=ids, labels=labels).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()

    step()  # warm-up
    t0, c0 = time.perf_counter(), cpu_seconds()
    for _ in range(steps):
        step()
    dt, cpu = time.perf_counter() - t0, cpu_seconds() - c0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    tokens = nseq * (prompt + response)
    # tokens per CPU-second (user + system, all threads) counts only this
    # process's work on a shared machine, where the wall clock does not.
    logits = ("autocast-bf16 " if autocast else "") + ("response-logits " if response_logits else "")
    print(f"torch+peft {logits}{shape}/{mode}: {tokens * steps / dt:.0f} tokens/s, {tokens * steps / cpu:.0f} tokens/cpu-s, "
          f"peak RSS {rss:.0f} MB, threads {torch.get_num_threads()}, {dt / steps:.2f} s/step", flush=True)


def cpu_seconds():
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--large", action="store_true", help="also the Qwen3-0.6B shape")
    ap.add_argument("--only", default="", help="shape/mode to run, e.g. smollm2-135m/lora")
    ap.add_argument("--seqs", type=int, default=0, help="sequences per step instead of the shape's own count")
    ap.add_argument("--response-logits", action="store_true",
                    help="logits only at the positions that predict a response token (logits_to_keep)")
    ap.add_argument("--autocast-bf16", action="store_true", help="forward and backward under torch.autocast to bf16")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    for shape, spec in SHAPES.items():
        for mode in ("lora", "full"):
            if a.only:
                if a.only != f"{shape}/{mode}":
                    continue
            elif spec[6] and not a.large or shape == "smollm2-135m" and mode == "full":
                continue
            bench(shape, mode, a.steps, a.response_logits, a.seqs, a.autocast_bf16)
