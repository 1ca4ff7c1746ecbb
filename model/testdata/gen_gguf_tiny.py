"""Tiny GGUF models for the GGUF loader's parity tests, written with the gguf
Python package, and what transformers' GGUF loader and llama.cpp compute on
them (model/testdata/gguf_tiny.json).

    /root/.cache/clawrl/refvenv/bin/python model/testdata/gen_gguf_tiny.py

One file per architecture (llama: Q/K rows permuted as llama.cpp's converter
does, separate output; qwen2: q/k/v biases, tied; qwen3: q/k norms, tied).
Each linear and the embedding take a different tensor type, cycling through
all thirteen clawrl reads (F32 F16 BF16 Q8_0 Q4_0 Q4_1 Q5_0 Q5_1 Q2_K Q3_K
Q4_K Q5_K Q6_K), so one forward pass checks every type in a real model. Logits are computed in
float64 from transformers' dequantized weights; greedy ids in float32. The
types gguf can quantize are quantized from random float weights; the
k-quants (which it only dequantizes) are random blocks with small scales.
The vocabulary is byte-level BPE: the 256 byte tokens, merges learned from a
short text, and ChatML's control tokens.
"""
import collections
import copy
import json
import os
import urllib.request

import numpy as np
import torch
from gguf import GGML_QUANT_SIZES, GGUFWriter, quants
from gguf import GGMLQuantizationType as T
from transformers import AutoModelForCausalLM, AutoTokenizer

HERE = os.path.dirname(os.path.abspath(__file__))
TYPES = [T.F32, T.F16, T.BF16, T.Q8_0, T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1, T.Q2_K, T.Q3_K, T.Q4_K, T.Q5_K, T.Q6_K]
H, FFN, LAYERS, HEADS, KV = 256, 256, 2, 4, 2
TEXT = """The quick brown fox jumps over the lazy dog. The capital of France is Paris.
Models learn from what the user says next: thanks, complaints and corrections all carry a signal.
def f(x):\n    return x * 2  # twice\nSELECT name FROM users WHERE age >= 18;"""
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
TEMPLATE = ("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}"
            "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


def vocabulary(n_merges=60):
    """Byte tokens plus merges learned greedily from TEXT (split on spaces, GPT-2 style)."""
    b2u = bytes_to_unicode()
    tokens = [b2u[b] for b in range(256)]
    words = collections.Counter()
    for w in TEXT.replace("\n", " ").split(" "):
        if w:
            words[tuple(b2u[b] for b in (" " + w).encode())] += 1
    merges = []
    for _ in range(n_merges):
        pairs = collections.Counter()
        for w, c in words.items():
            for a, b in zip(w, w[1:]):
                pairs[(a, b)] += c
        if not pairs:
            break
        (a, b), _ = max(pairs.items(), key=lambda kv: (kv[1], kv[0]))
        merges.append(a + " " + b)
        tokens.append(a + b)
        nw = collections.Counter()
        for w, c in words.items():
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and w[i] == a and w[i + 1] == b:
                    out.append(a + b)
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            nw[tuple(out)] += c
        words = nw
    types = [1] * len(tokens) + [3] * len(SPECIALS)
    return tokens + SPECIALS, types, merges


def permute(w, n_head):  # convert_hf_to_gguf.py's LlamaModel.permute
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def encode(rng, w, qt):
    """The tensor's bytes as type qt (random blocks for k-quants)."""
    if qt == T.F32:
        return w.astype(np.float32), None
    if qt == T.F16:
        return w.astype(np.float16), None
    if qt in (T.BF16, T.Q8_0, T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1):
        return quants.quantize(w.astype(np.float32), qt), qt
    rows, cols = w.shape
    nb = rows * cols // 256
    size = GGML_QUANT_SIZES[qt][1]
    b = rng.integers(0, 256, size=(nb, size), dtype=np.uint8)
    scale = 1.0 / np.sqrt(cols)
    offs = {T.Q2_K: ((80, 0.05), (82, 0.02)), T.Q3_K: ((108, 0.02),), T.Q4_K: ((0, 0.008), (2, 0.004)),
            T.Q5_K: ((0, 0.004), (2, 0.002)), T.Q6_K: ((208, 0.0015),)}[qt]
    for off, mag in offs:
        h = (rng.uniform(0.5, 1.0, nb) * mag * scale * 16).astype(np.float16)
        b[:, off:off + 2] = h.view(np.uint8).reshape(nb, 2)
    return b.reshape(rows, -1), qt


def write(arch, path, seed, tokens, types, merges):
    rng = np.random.default_rng(seed)
    # transformers' GGUF config for qwen3 ignores attention.key_length and
    # keeps Qwen3's head_dim 128, which every released Qwen3 has.
    HD = 128 if arch == "qwen3" else 64
    pre = {"llama": "llama-bpe", "qwen2": "qwen2", "qwen3": "qwen2"}[arch]
    V = len(tokens)
    w = GGUFWriter(path, arch=arch)
    w.add_context_length(4096)
    w.add_embedding_length(H)
    w.add_block_count(LAYERS)
    w.add_feed_forward_length(FFN)
    w.add_head_count(HEADS)
    w.add_head_count_kv(KV)
    w.add_rope_freq_base(10000.0 if arch == "llama" else 1000000.0)
    w.add_layer_norm_rms_eps(1e-5 if arch == "llama" else 1e-6)
    w.add_rope_dimension_count(HD)
    if arch == "qwen3":
        w.add_key_length(HD)
        w.add_value_length(HD)
    w.add_vocab_size(V)
    w.add_file_type(1)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre(pre)
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    w.add_bos_token_id(tokens.index("<|im_start|>"))
    w.add_eos_token_id(tokens.index("<|im_end|>"))
    w.add_pad_token_id(tokens.index("<|endoftext|>"))
    w.add_add_bos_token(False)
    w.add_chat_template(TEMPLATE)

    slot = [seed % len(TYPES)]

    def linear(name, out, inp, perm_heads=0):
        qt = TYPES[slot[0] % len(TYPES)]
        slot[0] += 1
        x = rng.standard_normal((out, inp)).astype(np.float32) / np.sqrt(inp)
        if name == "token_embd.weight" or name == "output.weight":
            x *= 2
        if perm_heads:
            x = permute(x, perm_heads)
        data, raw = encode(rng, x, qt)
        w.add_tensor(name, data, raw_dtype=raw)

    def vec(name, n, mean=1.0, std=0.1):
        w.add_tensor(name, (mean + std * rng.standard_normal(n)).astype(np.float32))

    linear("token_embd.weight", V, H)
    vec("output_norm.weight", H)
    if arch == "llama":
        linear("output.weight", V, H)
    for i in range(LAYERS):
        p = "blk.%d." % i
        vec(p + "attn_norm.weight", H)
        vec(p + "ffn_norm.weight", H)
        linear(p + "attn_q.weight", HEADS * HD, H, HEADS if arch == "llama" else 0)
        linear(p + "attn_k.weight", KV * HD, H, KV if arch == "llama" else 0)
        linear(p + "attn_v.weight", KV * HD, H)
        linear(p + "attn_output.weight", H, HEADS * HD)
        linear(p + "ffn_gate.weight", FFN, H)
        linear(p + "ffn_up.weight", FFN, H)
        linear(p + "ffn_down.weight", H, FFN)
        if arch == "qwen2":
            vec(p + "attn_q.bias", HEADS * HD, 0.0)
            vec(p + "attn_k.bias", KV * HD, 0.0)
            vec(p + "attn_v.bias", KV * HD, 0.0)
        if arch == "qwen3":
            vec(p + "attn_q_norm.weight", HD)
            vec(p + "attn_k_norm.weight", HD)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def llamacpp(path, prompt_text, n):
    import xllamacpp
    p = xllamacpp.CommonParams()
    p.model.path = path
    p.port = 30796
    p.n_ctx = 512
    p.cpuparams.n_threads = 2
    p.cpuparams_batch.n_threads = 2
    server = xllamacpp.Server(p)

    def post(route, body):
        req = urllib.request.Request("http://127.0.0.1:30796" + route, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        return json.loads(urllib.request.urlopen(req).read())

    ids = post("/tokenize", {"content": prompt_text, "add_special": False, "parse_special": True})["tokens"]
    r = post("/completion", {"prompt": ids, "n_predict": n, "temperature": 0, "top_k": 1, "cache_prompt": False,
                             "return_tokens": True, "ignore_eos": True})
    del server
    return ids, r["tokens"]


tokens, types, merges = vocabulary()
chat = [{"role": "user", "content": "What is the capital of France? The quick brown fox."}]
out = {}
for seed, arch in enumerate(["llama", "qwen2", "qwen3"]):
    name = "tiny_%s.gguf" % arch
    path = os.path.join(HERE, name)
    write(arch, path, seed * 5, tokens, types, merges)
    tok = AutoTokenizer.from_pretrained(HERE, gguf_file=name)
    model = AutoModelForCausalLM.from_pretrained(HERE, gguf_file=name, dtype=torch.float32).eval()
    text = tok.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
    ids = tok.encode(text, add_special_tokens=False)
    with torch.no_grad():
        # The logits come from the same dequantized weights computed in
        # float64: float32 engines (transformers' and clawrl's) each land
        # within rounding of it, while they can differ from each other by
        # twice that where a position is ill-conditioned.
        logits = copy.deepcopy(model).double()(torch.tensor([ids])).logits[0]
        gen = model.generate(torch.tensor([ids]), max_new_tokens=16, do_sample=False, eos_token_id=None,
                             pad_token_id=tokens.index("<|endoftext|>"))
    cpp_ids, cpp_greedy = llamacpp(path, text, 16)
    out[arch] = {"file": name, "text": text, "ids": ids, "ids_llamacpp": cpp_ids,
                 "logits": [[float("%.8g" % v) for v in row] for row in logits.tolist()],
                 "greedy_hf": gen[0, len(ids):].tolist(), "greedy_llamacpp": cpp_greedy}
    print(arch, os.path.getsize(path), "bytes; greedy hf", out[arch]["greedy_hf"], "llama.cpp", cpp_greedy)
json.dump(out, open(os.path.join(HERE, "gguf_tiny.json"), "w"))
