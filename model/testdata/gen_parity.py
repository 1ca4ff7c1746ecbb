#!/usr/bin/env python3
"""Generates the model parity fixtures: what transformers (and PEFT) compute
for tiny random qwen3, qwen2 and llama checkpoints.

The checkpoints are not committed (a 151,936-token f32 embedding alone is
39 MB): this script writes them with `go run ./cmd/clawrl model new --seed N`,
and the Go test rebuilds the same weights from the same seed in-process. Each
fixture records checksums of the weights so a drift in the generator is caught
as such rather than as a parity failure.

Re-run from the repository root (needs go, torch, transformers, peft,
safetensors, numpy — not needed by CI, which only reads the fixtures):

    python3 model/testdata/gen_parity.py

Writes model/testdata/parity_<arch>.json and model/testdata/adapter_<arch>/
(a PEFT LoRA adapter with random A and B, r=4, alpha=8, all seven modules).
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
from transformers import AutoModelForCausalLM, GenerationConfig
from peft import LoraConfig, get_peft_model

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
ARCHS = [("qwen3", 11), ("qwen2", 12), ("llama", 13)]
SEQ_LEN = 512          # logits are checked at every position of one 512-token forward
PROMPT_LEN = 200       # Score: prompt = ids[:200], completion = ids[200:512]
TOPK = 8               # per position: the top-k ids and logits
STRIDE = 97            # full-vocabulary sample: every 97th logit ...
FULL_POSITIONS = [0, 1, 100, 511]  # ... at these positions
GREEDY_PROMPTS = [(0, 5), (5, 17), (17, 18)]  # slices of ids
GREEDY_NEW = 24
ADAPTER_LEN = 64


def r7(x):
    return [float("%.7g" % v) for v in x]


def summarise(logits):
    """Per-position logsumexp and top-k, plus sampled full rows."""
    lse = torch.logsumexp(logits.double(), dim=-1)
    top = torch.topk(logits, TOPK, dim=-1)
    return {
        "lse": r7(lse.tolist()),
        "top_ids": top.indices.tolist(),
        "top_logits": [r7(row) for row in top.values.tolist()],
        "sample_positions": [p for p in FULL_POSITIONS if p < logits.shape[0]],
        "sample_stride": STRIDE,
        "sample_logits": [r7(logits[p, ::STRIDE].tolist()) for p in FULL_POSITIONS if p < logits.shape[0]],
    }


def main():
    torch.set_num_threads(2)
    for arch, seed in ARCHS:
        with tempfile.TemporaryDirectory() as d:
            subprocess.run(["go", "run", "./cmd/clawrl", "model", "new", "--arch", arch, "--size", "tiny",
                            "--seed", str(seed), "--out", d, "--weights-only"], cwd=ROOT, check=True)
            model = AutoModelForCausalLM.from_pretrained(d, dtype=torch.float32, attn_implementation="eager")
            model.eval()
            sd = model.state_dict()
            cfg = model.config
            rng = np.random.RandomState(seed)
            ids = rng.randint(0, min(cfg.vocab_size, 150000), size=SEQ_LEN).tolist()
            x = torch.tensor([ids])
            with torch.no_grad():
                logits = model(x).logits[0].float()
            lp = torch.log_softmax(logits.double(), dim=-1)
            score = [lp[t - 1, ids[t]].item() for t in range(PROMPT_LEN, SEQ_LEN)]

            greedy = []
            # Explicit neutral settings: transformers merges the checkpoint's
            # generation_config.json (Qwen2's has repetition_penalty) otherwise.
            gc = GenerationConfig(max_new_tokens=GREEDY_NEW, do_sample=False, eos_token_id=None, pad_token_id=0,
                                  bos_token_id=None, repetition_penalty=1.0, top_k=None, top_p=None, temperature=None)
            for lo, hi in GREEDY_PROMPTS:
                with torch.no_grad():
                    out = model.generate(torch.tensor([ids[lo:hi]]), generation_config=gc)
                greedy.append({"prompt": ids[lo:hi], "ids": out[0, hi - lo:].tolist()})

            # A LoRA adapter with random A and B (PEFT's default B is zero,
            # which would test nothing).
            torch.manual_seed(seed)
            lcfg = LoraConfig(r=4, lora_alpha=8, lora_dropout=0.0, task_type="CAUSAL_LM",
                              target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"])
            peft_model = get_peft_model(model, lcfg)
            with torch.no_grad():
                for name, p in peft_model.named_parameters():
                    if "lora_B" in name:
                        p.normal_(0, 0.2)
            peft_model.eval()
            adir = os.path.join(HERE, "adapter_" + arch)
            peft_model.save_pretrained(adir)
            os.remove(os.path.join(adir, "README.md"))  # PEFT's model card boilerplate
            with torch.no_grad():
                alogits = peft_model(torch.tensor([ids[:ADAPTER_LEN]])).logits[0].float()

            fixture = {
                "generator": "model/testdata/gen_parity.py",
                "torch": torch.__version__,
                "transformers": __import__("transformers").__version__,
                "peft": __import__("peft").__version__,
                "arch": arch, "size": "tiny", "seed": seed,
                "weight_sums": {n: float("%.9g" % sd[n].double().sum().item())
                                for n in ["model.embed_tokens.weight", "model.layers.1.mlp.down_proj.weight", "model.norm.weight"]},
                "ids": ids,
                "logits": summarise(logits),
                "score_prompt_len": PROMPT_LEN,
                "score": r7(score),
                "greedy": greedy,
                "adapter_len": ADAPTER_LEN,
                "adapter_logits": summarise(alogits),
            }
            path = os.path.join(HERE, "parity_%s.json" % arch)
            with open(path, "w") as f:
                json.dump(fixture, f, separators=(",", ":"))
            print("wrote", path, os.path.getsize(path), "bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
