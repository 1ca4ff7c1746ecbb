#!/usr/bin/env python3
"""Torch reference for rl.TestDistillGradientsTorch (rl/distill_test.go).

Re-run from the repository root (needs torch, transformers, peft, safetensors;
CI never runs this, it only reads what it commits):

    python3 rl/testdata/gen_distill.py

Re-run it whenever train/testdata/gen_parity.py rewrites the llama fixture it reads.

It loads the tiny llama checkpoint and PEFT adapter that train/testdata/gen_parity.py
committed (train/testdata/llama), takes its three sequences and teacher log-probabilities,
and computes, with torch autograd, the LoRA gradients of one policy step on a mixed batch,
as rl.PolicyStep builds it (one epoch: pi_old is the step's own detached log-probabilities,
so every ratio is 1; Combined advantages with w_opd = w_rl = 1, the teacher - old gap
clipped to +-1, no reward baseline; the loss averaged over all response tokens):

  case "distill" (StepConfig.DistillCoef = 2.5):
    seq 0  the student's response, reward +1 and teacher log-probs: PPO, A = 1 + clip(teacher - old)
    seq 1  teacher-written, with teacher log-probs: 2.5 x cross-entropy
    seq 2  rehearsal anchor of weight 1: PPO, A = 1
  case "ppo" (DistillCoef = 0, the old path):
    seq 0  as above
    seq 1  teacher-written, with teacher log-probs: PPO, A = clip(teacher - old)
    seq 2  teacher-written, no teacher log-probs: 1 x cross-entropy (the fallback)
  case "sample_mean" (StepConfig.LossMean = "sample"): the "distill" batch, each
    sequence's loss averaged over its own tokens and then over the three sequences
  case "focus" (StepConfig.DistillFocus = 1.5): the "distill" batch, seq 1's
    cross-entropy weighted per token by 1 + 1.5 x clamp(teacher - logp, 0, 4),
    logp detached (rl.focusWeight)

Writes rl/testdata/distill_grads.safetensors ("<case>/<peft tensor name>") and
rl/testdata/distill_loss.json (the two losses).
"""
import json
import os

import torch
from peft import PeftModel
from safetensors.torch import save_file
from transformers import LlamaForCausalLM

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
LLAMA = os.path.join(ROOT, "train", "testdata", "llama")
COEF = 2.5
FOCUS = 1.5


def logps(model, seqs):
    out = []
    for prompt, resp in seqs:
        ids = torch.tensor([prompt + resp])
        logits = model(input_ids=ids).logits[0]
        rows = logits[len(prompt) - 1: len(prompt) + len(resp) - 1]
        lp = torch.log_softmax(rows, dim=-1)
        out.append(lp.gather(1, torch.tensor(resp)[:, None])[:, 0])
    return out


def ppo(logp, adv):
    # At ratio 1 the clipped and unclipped branches tie; the gradient is -A.
    ratio = torch.exp(logp - logp.detach())
    return torch.maximum(-ratio * adv, -torch.clamp(ratio, 0.8, 1.28) * adv).sum()


def main():
    inp = json.load(open(os.path.join(LLAMA, "inputs.json")))
    seqs = [(s["prompt_ids"], s["response_ids"]) for s in inp["seqs"]]
    teacher = [torch.tensor(t) for t in inp["teacher"]]
    cfg = LlamaForCausalLM.from_pretrained(LLAMA).config
    cfg._attn_implementation = "eager"
    base = LlamaForCausalLM.from_pretrained(LLAMA, config=cfg).float()
    pm = PeftModel.from_pretrained(base, os.path.join(LLAMA, "adapter_peft"), is_trainable=True)
    pm.eval()
    n = sum(len(r) for _, r in seqs)
    gap = lambda i, lp: torch.clamp(teacher[i] - lp.detach(), -1, 1)
    # Each case gives its three sequences' summed losses.
    distill = lambda lp: [ppo(lp[0], 1 + gap(0, lp[0])), COEF * (-lp[1]).sum(), ppo(lp[2], torch.ones_like(lp[2]))]
    focus = lambda lp: COEF * (-(1 + FOCUS * torch.clamp(teacher[1] - lp[1].detach(), 0, 4)) * lp[1]).sum()
    cases = {
        "distill": (distill, "token"),
        "focus": (lambda lp: [ppo(lp[0], 1 + gap(0, lp[0])), focus(lp), ppo(lp[2], torch.ones_like(lp[2]))], "token"),
        "ppo": (lambda lp: [ppo(lp[0], 1 + gap(0, lp[0])), ppo(lp[1], gap(1, lp[1])), (-lp[2]).sum()], "token"),
        "sample_mean": (distill, "sample"),
    }
    grads, losses = {}, {}
    for name, (f, mean) in cases.items():
        pm.zero_grad()
        terms = f(logps(pm, seqs))
        if mean == "token":
            loss = sum(terms) / n
        else:
            loss = sum(t / len(r) for t, (_, r) in zip(terms, seqs)) / len(seqs)
        loss.backward()
        losses[name] = loss.item()
        for pn, p in pm.named_parameters():
            if "lora_" in pn:
                grads[f"{name}/{pn.replace('.default', '')}"] = p.grad.detach().clone().contiguous()
    save_file(grads, os.path.join(HERE, "distill_grads.safetensors"))
    json.dump({"coef": COEF, "focus": FOCUS, "losses": losses}, open(os.path.join(HERE, "distill_loss.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
