#!/usr/bin/env python3
"""Ground truth for TestBF16GradientsAgainstTorch: LoRA gradients of an SFT
loss at SmolLM2-135M's widths (hidden 576, FFN 1,536, 9/3 heads of 64,
vocabulary 49,152, tied embeddings; fewer layers), in float32 and under
torch.autocast("cpu", dtype=torch.bfloat16) (every matmul of forward and
backward in bf16 with float32 accumulation).

    python3 train/testdata/bf16_grads.py OUT_DIR [--layers 4] [--seqs 4]

Writes OUT_DIR/config.json, model.safetensors, adapter_peft/ (r 16, alpha 32,
random A and B), inputs.json (sequences) and grads.safetensors
("fp32/<name>", "bf16/<name>" for every LoRA tensor; "loss/fp32",
"loss/bf16"). The loss is the mean −log p over response tokens.
"""
import argparse
import json
import os

import torch
from peft import LoraConfig, get_peft_model
from safetensors.torch import save_file
from transformers import LlamaConfig, LlamaForCausalLM

TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--seqs", type=int, default=4)
    ap.add_argument("--prompt", type=int, default=32)
    ap.add_argument("--response", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(7)
    cfg = LlamaConfig(vocab_size=49152, hidden_size=576, intermediate_size=1536, num_hidden_layers=a.layers,
                      num_attention_heads=9, num_key_value_heads=3, head_dim=64, rms_norm_eps=1e-5,
                      rope_theta=100000, tie_word_embeddings=True, max_position_embeddings=2048)
    base = LlamaForCausalLM(cfg).float()
    os.makedirs(a.out, exist_ok=True)
    base.save_pretrained(a.out, safe_serialization=True)
    pm = get_peft_model(base, LoraConfig(r=16, lora_alpha=32, lora_dropout=0.0, target_modules=TARGETS,
                                         task_type="CAUSAL_LM"))
    with torch.no_grad():
        for n, p in pm.named_parameters():
            if "lora_" in n:
                p.copy_(0.02 * torch.randn_like(p))
    pm.save_pretrained(os.path.join(a.out, "adapter_peft"))
    g = torch.Generator().manual_seed(8)
    seqs = [(torch.randint(0, cfg.vocab_size, (a.prompt,), generator=g).tolist(),
             torch.randint(0, cfg.vocab_size, (a.response,), generator=g).tolist()) for _ in range(a.seqs)]
    with open(os.path.join(a.out, "inputs.json"), "w") as f:
        json.dump({"seqs": [{"prompt_ids": p, "response_ids": r} for p, r in seqs]}, f)
    ids = torch.tensor([p + r for p, r in seqs])
    keep = torch.arange(a.prompt - 1, a.prompt + a.response - 1)
    targets = torch.tensor([r for _, r in seqs]).reshape(-1)
    out = {}
    for name, ac in (("fp32", False), ("bf16", True)):
        pm.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=ac):
            logits = pm(input_ids=ids, logits_to_keep=keep).logits
            loss = torch.nn.functional.cross_entropy(logits.reshape(-1, cfg.vocab_size).float(), targets)
        loss.backward()
        out["loss/" + name] = torch.tensor([loss.item()])
        for n, p in pm.named_parameters():
            if "lora_" in n:
                out[name + "/" + n.replace(".default", "")] = p.grad.detach().float().clone()
    save_file({k: v.contiguous() for k, v in out.items()}, os.path.join(a.out, "grads.safetensors"))


if __name__ == "__main__":
    main()
