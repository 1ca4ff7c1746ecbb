# Reference side of `clawrl bench model`: the same prefill and decode
# measurements with transformers on torch CPU. Reads a JSON spec on stdin,
# prints one JSON result line on stdout.
import json
import sys
import time

import torch
from transformers import AutoModelForCausalLM

spec = json.load(sys.stdin)
torch.set_num_threads(spec["threads"])
dtype = torch.bfloat16 if spec["dtype"] == "bf16" else torch.float32
model = AutoModelForCausalLM.from_pretrained(spec["model"], dtype=dtype)
model.eval()
prompts = spec["prompts"]
n_decode = spec["decode"]


first_ids = []


def decode(batch_ids):
    """Greedy decode with the KV cache; returns decoded tokens per second.
    Records the first sequence's greedy ids in first_ids."""
    with torch.no_grad():
        out = model(torch.tensor(batch_ids), use_cache=True)
        past = out.past_key_values
        nxt = out.logits[:, -1].argmax(-1, keepdim=True)
        ids = [int(nxt[0, 0])]
        start = time.perf_counter()
        for _ in range(n_decode):
            out = model(nxt, past_key_values=past, use_cache=True)
            past = out.past_key_values
            nxt = out.logits[:, -1].argmax(-1, keepdim=True)
            ids.append(int(nxt[0, 0]))
        rate = n_decode * len(batch_ids) / (time.perf_counter() - start)
        if not first_ids:
            first_ids.extend(ids[:8])
        return rate


with torch.no_grad():
    model(torch.tensor([prompts[0][:8]]))  # warm up
    start = time.perf_counter()
    model(torch.tensor([prompts[0]]))
    prefill = len(prompts[0]) / (time.perf_counter() - start)
single = decode([prompts[0]])
batched = decode(prompts[1:])
print(json.dumps({"engine": "transformers %s torch %s" % (__import__("transformers").__version__, torch.__version__),
                  "prefill_tok_s": prefill, "decode_tok_s": single, "batch_decode_tok_s": batched,
                  "first_ids": first_ids}))
