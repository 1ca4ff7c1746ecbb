#!/usr/bin/env python3
"""Reference for BenchmarkTrainStep: training tokens/s of transformers + PEFT
(LoRA r16/alpha 32 on q,k,v,o,gate,up,down) or full fine-tuning with
torch.optim.AdamW, one step = forward + backward + optimizer step on 2
sequences of 128 tokens (SFT loss on the last 64 of each), float32 on CPU.

    python3 train/testdata/bench_torch.py --threads 2 [--large] [--steps 3]

Prints one line per (shape, mode): tokens/s and peak RSS (MB, whole process).
"""
import argparse
import resource
import time

import torch
from peft import LoraConfig, get_peft_model
from transformers import Qwen3Config, Qwen3ForCausalLM

SHAPES = {
    "tiny": dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2, head_dim=16),
    "qwen3-0.6b": dict(hidden_size=1024, intermediate_size=3072, num_hidden_layers=28, num_attention_heads=16,
                       num_key_value_heads=8, head_dim=128),
}


def bench(shape, mode, steps):
    cfg = Qwen3Config(vocab_size=151936, rms_norm_eps=1e-6, rope_theta=1e6, tie_word_embeddings=True, **SHAPES[shape])
    torch.manual_seed(0)
    m = Qwen3ForCausalLM(cfg).float()
    if mode == "lora":
        m = get_peft_model(m, LoraConfig(r=16, lora_alpha=32, lora_dropout=0.0, task_type="CAUSAL_LM",
                                         target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]))
        lr = 1e-4
    else:
        lr = 1e-5
    m.train()
    params = [p for p in m.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=lr, betas=(0.9, 0.98), eps=1e-8, weight_decay=0.1)
    ids = torch.randint(0, 151936, (2, 128))
    labels = ids.clone()
    labels[:, :64] = -100

    def step():
        opt.zero_grad()
        out = m(input_ids=ids, labels=labels)
        out.loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()

    step()  # warm-up
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    dt = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"torch+peft {shape}/{mode}: {256 * steps / dt:.0f} tokens/s, peak RSS {rss:.0f} MB, threads {torch.get_num_threads()}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--large", action="store_true", help="also the Qwen3-0.6B shape")
    ap.add_argument("--only", default="", help="shape/mode to run, e.g. qwen3-0.6b/lora")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    for shape in SHAPES:
        if shape != "tiny" and not a.large:
            continue
        for mode in ("lora", "full"):
            if a.only and a.only != f"{shape}/{mode}":
                continue
            bench(shape, mode, a.steps)
