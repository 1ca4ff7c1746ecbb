#!/usr/bin/env python3
"""Reference fixtures for package train's parity tests (TestParity*).

Re-run from the repository root (needs torch, transformers, peft, safetensors
and Go; CI never runs this, it only reads what it commits):

    python3 train/testdata/gen_parity.py

For each architecture (qwen3: q/k norms, tied embeddings; qwen2: qkv biases;
llama: plain) it writes train/testdata/<arch>/:

  config.json, model.safetensors   a tiny random checkpoint (vocab 512), float32
  adapter_peft/                    a PEFT LoRA adapter (r 4, alpha 8, random A and B) saved by PEFT
  adapter_clawrl/                  an adapter saved by clawrl (written by the Go test with -update)
  inputs.json                      sequences, old/behaviour/teacher/ref logprobs, rewards, loss
                                   settings, expected losses, probe ids
  grads_lora.safetensors           d loss / d lora_A, lora_B for every loss ("<loss>/<name>")
  grads_full.safetensors           d loss / d every weight for the losses listed in inputs.json
  expect.safetensors               log-softmax rows of a probe sequence under both adapters, and
                                   the LoRA weights after two AdamW steps on the ppo loss

The losses mirror rl.LossConfig: token-level PPO clip with truncated
behaviour->old importance weights, KL (k1/k3) and entropy terms, and SFT NLL,
averaged over all response tokens of the batch.
"""
import json
import os
import subprocess
import sys

import torch
from peft import LoraConfig, PeftModel, get_peft_model
from safetensors.torch import save_file
from transformers import LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM, Qwen3Config, Qwen3ForCausalLM

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
SHAPE = dict(vocab_size=512, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
             num_attention_heads=4, num_key_value_heads=2, head_dim=8, rms_norm_eps=1e-6)
ARCHS = {
    "qwen3": (Qwen3Config, Qwen3ForCausalLM, dict(tie_word_embeddings=True)),
    "qwen2": (Qwen2Config, Qwen2ForCausalLM, dict(tie_word_embeddings=False)),
    "llama": (LlamaConfig, LlamaForCausalLM, dict(tie_word_embeddings=False, attention_bias=False, mlp_bias=False)),
}
SEQS = [(5, 7), (3, 4), (8, 5)]  # (prompt, response) lengths
LOSSES = {
    # name: loss settings (rl.LossConfig fields) and advantage settings
    "ppo": dict(kind="ppo", clip_low=0.2, clip_high=0.28, kl_coef=0.05, kl_estimator="k3",
                entropy_coef=0.01, is_cap=2.0, method="rl", w_opd=1.0, w_rl=1.0),
    "opd": dict(kind="ppo", clip_low=0.2, clip_high=0.28, kl_coef=0.0, kl_estimator="k3",
                entropy_coef=0.0, is_cap=2.0, method="opd", w_opd=1.0, w_rl=1.0),
    "combined": dict(kind="ppo", clip_low=0.2, clip_high=0.28, kl_coef=0.02, kl_estimator="k1",
                     entropy_coef=0.0, is_cap=2.0, method="combine", w_opd=0.7, w_rl=1.0),
    "sft": dict(kind="sft"),
}
FULL_LOSSES = {"qwen3": ["ppo", "opd", "combined", "sft"], "qwen2": ["ppo", "sft"], "llama": ["combined", "sft"]}
ADAMW = dict(lr=1e-3, betas=(0.9, 0.98), eps=1e-8, weight_decay=0.1, max_grad_norm=0.05, steps=2)


def build(arch, seed):
    cfg_cls, model_cls, extra = ARCHS[arch]
    cfg = cfg_cls(**SHAPE, **extra)
    cfg._attn_implementation = "eager"
    torch.manual_seed(seed)
    m = model_cls(cfg).float()
    with torch.no_grad():
        for name, p in m.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(1 + 0.2 * torch.randn_like(p))
            elif name.endswith(".bias"):
                p.copy_(0.1 * torch.randn_like(p))
            else:
                p.copy_(0.08 * torch.randn_like(p))
    m.eval()
    return m


def token_stats(model, seqs):
    """Per sequence: logp of each response token and the entropy of its distribution."""
    out = []
    for prompt, resp in seqs:
        ids = torch.tensor([prompt + resp])
        logits = model(input_ids=ids).logits[0]
        rows = logits[len(prompt) - 1: len(prompt) + len(resp) - 1]
        lp = torch.log_softmax(rows, dim=-1)
        logp = lp.gather(1, torch.tensor(resp)[:, None])[:, 0]
        ent = -(lp.exp() * lp).sum(-1)
        out.append((logp, ent))
    return out


def advantages(cfg, reward, teacher, old):
    m = cfg["method"]
    if m == "rl":
        return torch.full_like(old, reward)
    if m == "opd":
        return teacher - old
    return cfg["w_opd"] * (teacher - old) + cfg["w_rl"] * reward


def loss_fn(cfg, stats, inp):
    total, n = 0.0, 0
    for i, (logp, ent) in enumerate(stats):
        n += logp.numel()
        if cfg["kind"] == "sft":
            total = total + (-logp).sum()
            continue
        old = torch.tensor(inp["old"][i])
        beh = torch.tensor(inp["behaviour"][i])
        teacher = torch.tensor(inp["teacher"][i])
        ref = torch.tensor(inp["ref"][i])
        A = advantages(cfg, inp["rewards"][i], teacher, old)
        ratio = torch.exp(logp - old)
        pg = torch.maximum(-ratio * A, -torch.clamp(ratio, 1 - cfg["clip_low"], 1 + cfg["clip_high"]) * A)
        w = torch.clamp(torch.exp(old - beh), max=cfg["is_cap"])
        l = w * pg
        if cfg["kl_coef"]:
            if cfg["kl_estimator"] == "k1":
                kl = logp - ref
            else:
                d = ref - logp
                kl = torch.exp(d) - d - 1
            l = l + cfg["kl_coef"] * kl
        if cfg["entropy_coef"]:
            l = l - cfg["entropy_coef"] * ent
        total = total + l.sum()
    return total / n


def peft_name(name):
    return name.replace(".default", "")


def lora_params(pm):
    return {peft_name(n): p for n, p in pm.named_parameters() if "lora_" in n}


def gen(arch, seed):
    d = os.path.join(HERE, arch)
    os.makedirs(d, exist_ok=True)
    base = build(arch, seed)
    base.save_pretrained(d, safe_serialization=True)
    g = torch.Generator().manual_seed(seed + 1)
    seqs = [(torch.randint(0, 512, (p,), generator=g).tolist(), torch.randint(0, 512, (r,), generator=g).tolist())
            for p, r in SEQS]
    with torch.no_grad():
        stats = token_stats(base, seqs)
    noise = lambda x, s: (x + s * torch.randn(x.shape, generator=g)).tolist()
    inp = {
        "seqs": [{"prompt_ids": p, "response_ids": r} for p, r in seqs],
        "old": [noise(lp, 0.3) for lp, _ in stats],
        "rewards": [1.0, -1.0, 1.0],
    }
    inp["behaviour"] = [(torch.tensor(o) + 0.5 * torch.randn(len(o), generator=g)).tolist() for o in inp["old"]]
    inp["teacher"] = [noise(lp, 0.5) for lp, _ in stats]
    inp["ref"] = [noise(lp, 0.2) for lp, _ in stats]
    inp["losses"] = LOSSES
    inp["full_losses"] = FULL_LOSSES[arch]
    inp["adamw"] = ADAMW
    inp["probe_ids"] = torch.randint(0, 512, (12,), generator=g).tolist()

    # Full fine-tuning gradients.
    expect_full, grads_full = {}, {}
    for name in FULL_LOSSES[arch]:
        base.zero_grad()
        loss = loss_fn(LOSSES[name], token_stats(base, seqs), inp)
        loss.backward()
        expect_full[name] = loss.item()
        for pn, p in base.named_parameters():
            grads_full[f"{name}/{pn}"] = p.grad.detach().clone()
    inp["expect_loss_full"] = expect_full

    # LoRA: PEFT adapter with random A and B (B non-zero so dA is too).
    pm = get_peft_model(build(arch, seed), LoraConfig(r=4, lora_alpha=8, lora_dropout=0.0,
                                                       target_modules=TARGETS, task_type="CAUSAL_LM"))
    torch.manual_seed(seed + 2)
    with torch.no_grad():
        for n, p in lora_params(pm).items():
            p.copy_(0.1 * torch.randn_like(p))
    pm.save_pretrained(os.path.join(d, "adapter_peft"))
    expect_lora, grads_lora = {}, {}
    for name in LOSSES:
        pm.zero_grad()
        loss = loss_fn(LOSSES[name], token_stats(pm, seqs), inp)
        loss.backward()
        expect_lora[name] = loss.item()
        for pn, p in lora_params(pm).items():
            grads_lora[f"{name}/{pn}"] = p.grad.detach().clone()
    inp["expect_loss_lora"] = expect_lora

    expect = {}
    probe = torch.tensor([inp["probe_ids"]])
    with torch.no_grad():
        expect["peft_logsoftmax"] = torch.log_softmax(pm(input_ids=probe).logits[0], -1)

    # Two AdamW steps (with global-norm clipping) on the ppo loss.
    params = list(lora_params(pm).values())
    names = list(lora_params(pm).keys())
    opt = torch.optim.AdamW(params, lr=ADAMW["lr"], betas=ADAMW["betas"], eps=ADAMW["eps"],
                            weight_decay=ADAMW["weight_decay"])
    for _ in range(ADAMW["steps"]):
        opt.zero_grad()
        loss_fn(LOSSES["ppo"], token_stats(pm, seqs), inp).backward()
        torch.nn.utils.clip_grad_norm_(params, ADAMW["max_grad_norm"])
        opt.step()
    for n, p in zip(names, params):
        expect["adamw/" + n] = p.detach().clone()

    # The adapter clawrl saved loads in PEFT on the same base.
    cdir = os.path.join(d, "adapter_clawrl")
    subprocess.run(["go", "test", "./train/", "-run", "TestWriteClawrlAdapter", "-count=1",
                    "-args", "-update-adapter=" + arch], cwd=ROOT, check=True)
    cm = PeftModel.from_pretrained(build(arch, seed), cdir)
    cm.eval()
    with torch.no_grad():
        expect["clawrl_logsoftmax"] = torch.log_softmax(cm(input_ids=probe).logits[0], -1)

    with open(os.path.join(d, "inputs.json"), "w") as f:
        json.dump(inp, f)
    save_file({k: v.contiguous() for k, v in grads_full.items()}, os.path.join(d, "grads_full.safetensors"))
    save_file({k: v.contiguous() for k, v in grads_lora.items()}, os.path.join(d, "grads_lora.safetensors"))
    save_file({k: v.contiguous() for k, v in expect.items()}, os.path.join(d, "expect.safetensors"))
    print(arch, "full", expect_full, "lora", expect_lora, file=sys.stderr)


if __name__ == "__main__":
    torch.set_num_threads(1)
    for i, arch in enumerate(ARCHS):
        gen(arch, 100 + i)
