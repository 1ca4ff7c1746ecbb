#!/usr/bin/env python3
"""Fixture for TestQLoRAAdapterInPEFT: an adapter trained by clawrl over
quantized base weights (QLoRA), loaded by PEFT on the Hugging Face model the
quantized base dequantizes to.

Re-run from the repository root (needs torch, transformers, peft, safetensors
and Go; CI only reads what it commits):

    python3 train/testdata/gen_qlora.py

1. `go test ./train -run TestQLoRAAdapterInPEFT -args -update-qlora` quantizes
   train/testdata/llama to Q4_1 blocks (Q8_0 embeddings), writes the
   dequantized model to train/testdata/qlora/base, trains LoRA on the
   quantized weights for two steps and saves the adapter to
   train/testdata/qlora/adapter;
2. this script loads base + adapter with transformers and PEFT and writes the
   log-softmax rows of the probe sequence to train/testdata/qlora/expect.safetensors.
"""
import os
import subprocess

import torch
from peft import PeftModel
from safetensors.torch import save_file
from transformers import AutoModelForCausalLM

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
PROBE = [1, 17, 200, 33, 5, 480, 77, 12, 300, 9, 41, 256]  # qloraProbe in qlora_test.go

if __name__ == "__main__":
    subprocess.run(["go", "test", "./train", "-run", "TestQLoRAAdapterInPEFT", "-count=1", "-args", "-update-qlora"],
                   cwd=ROOT, check=True)
    d = os.path.join(HERE, "qlora")
    model = AutoModelForCausalLM.from_pretrained(os.path.join(d, "base"), dtype=torch.float32)
    model = PeftModel.from_pretrained(model, os.path.join(d, "adapter"))
    model.eval()
    with torch.no_grad():
        logits = model(torch.tensor([PROBE])).logits[0].double()
    save_file({"peft_logsoftmax": torch.log_softmax(logits, -1).float().contiguous()}, os.path.join(d, "expect.safetensors"))
    print("wrote", os.path.join(d, "expect.safetensors"))
