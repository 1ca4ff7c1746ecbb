"""Writes a Qwen3-0.6B-shaped GGUF with random weights in llama.cpp's Q4_K_M
mix, for `clawrl bench model --model FILE.gguf --llamacpp PYTHON`.

    python scripts/gguf_qwen3_q4km.py OUT.gguf [--seed 1] [--layers 28]

Needs numpy and the `gguf` package (PyPI). The tokenizer is Qwen3's real one
(tokenizer/vocab/qwen3/tokenizer.json.gz), so llama.cpp loads the file as it
would a converted checkpoint. Weights are N(0, 0.02) (norms 1), quantized as
llama_tensor_get_type does for Q4_K_M: Q6_K for the tied token embedding
(it is also the output head) and for attn_v / ffn_down of the layers
use_more_bits picks, Q4_K for every other matrix, F32 norms. The quantizer
here picks each block's scales by min/max (quant/ref.go's rule, not
llama.cpp's error search): the blocks decode exactly as llama.cpp's do, and
the script checks that with gguf's own dequantize.
"""
import argparse
import gzip
import json
import os

import numpy as np
import gguf

HERE = os.path.dirname(os.path.abspath(__file__))
VOCAB = os.path.join(HERE, "..", "tokenizer", "vocab", "qwen3", "tokenizer.json.gz")

HIDDEN, INTER, HEADS, KV_HEADS, HEAD_DIM, VOCAB_SIZE = 1024, 3072, 16, 8, 128, 151936


def f16(x):
    return x.astype(np.float16)


def quant_q4_k(x):
    """[rows, cols] float32 -> [rows, cols/256*144] uint8 Q4_K blocks."""
    rows, cols = x.shape
    xs = x.reshape(-1, 8, 32).astype(np.float32)
    nb = xs.shape[0]
    lo = np.minimum(xs.min(-1), 0)
    hi = xs.max(-1)
    scale, minv = (hi - lo) / 15, -lo
    d16, dmin16 = f16(scale.max(-1) / 63), f16(minv.max(-1) / 63)
    d, dmin = d16.astype(np.float32)[:, None], dmin16.astype(np.float32)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        ls = np.where(d > 0, np.clip(np.round(scale / d), 0, 63), 0).astype(np.uint8)
        lm = np.where(dmin > 0, np.clip(np.round(minv / dmin), 0, 63), 0).astype(np.uint8)
        ds = (d * ls)[..., None]
        dm = (dmin * lm)[..., None]
        L = np.where(ds > 0, np.clip(np.round((xs + dm) / ds), 0, 15), 0).astype(np.uint8)
    sc = np.zeros((nb, 12), np.uint8)
    sc[:, 0:4] = ls[:, 0:4] | ((ls[:, 4:8] >> 4) << 6)
    sc[:, 4:8] = lm[:, 0:4] | ((lm[:, 4:8] >> 4) << 6)
    sc[:, 8:12] = (ls[:, 4:8] & 15) | ((lm[:, 4:8] & 15) << 4)
    qs = (L[:, 0::2, :] | (L[:, 1::2, :] << 4)).reshape(nb, 128)
    out = np.concatenate([d16.view(np.uint8).reshape(nb, 2), dmin16.view(np.uint8).reshape(nb, 2), sc, qs], axis=1)
    return out.reshape(rows, cols // 256 * 144)


def quant_q6_k(x):
    """[rows, cols] float32 -> [rows, cols/256*210] uint8 Q6_K blocks."""
    rows, cols = x.shape
    xs = x.reshape(-1, 16, 16).astype(np.float32)
    nb = xs.shape[0]
    idx = np.abs(xs).argmax(-1)
    mx = np.take_along_axis(xs, idx[..., None], -1)[..., 0]
    scale = mx / -32
    big = np.take_along_axis(scale, np.abs(scale).argmax(-1)[:, None], -1)
    d16 = f16(big[:, 0] / -128)
    d = d16.astype(np.float32)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        isc = np.where(d != 0, np.clip(np.round(scale / d), -128, 127), 0).astype(np.int8)
        ds = (d * isc)[..., None]
        L = np.where(ds != 0, np.clip(np.round(xs / ds) + 32, 0, 63), 32).astype(np.uint8).reshape(nb, 2, 4, 32)
    ql = np.concatenate([L[:, :, 0] & 15 | (L[:, :, 2] & 15) << 4, L[:, :, 1] & 15 | (L[:, :, 3] & 15) << 4], axis=2)
    qh = (L[:, :, 0] >> 4) | (L[:, :, 1] >> 4) << 2 | (L[:, :, 2] >> 4) << 4 | (L[:, :, 3] >> 4) << 6
    out = np.concatenate([ql.reshape(nb, 128), qh.reshape(nb, 64), isc.view(np.uint8), d16.view(np.uint8).reshape(nb, 2)], axis=1)
    return out.reshape(rows, cols // 256 * 210)


QUANT = {gguf.GGMLQuantizationType.Q4_K: quant_q4_k, gguf.GGMLQuantizationType.Q6_K: quant_q6_k}


def use_more_bits(i, n):
    return i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2


def tokenizer_kv(w):
    with gzip.open(VOCAB, "rt", encoding="utf-8") as f:
        tok = json.load(f)
    tokens = ["[PAD%d]" % i for i in range(VOCAB_SIZE)]
    types = [gguf.TokenType.UNUSED] * VOCAB_SIZE
    for t, i in tok["model"]["vocab"].items():
        tokens[i], types[i] = t, gguf.TokenType.NORMAL
    ids = {}
    for a in tok["added_tokens"]:
        tokens[a["id"]] = a["content"]
        types[a["id"]] = gguf.TokenType.CONTROL if a["special"] else gguf.TokenType.USER_DEFINED
        ids[a["content"]] = a["id"]
    merges = [m if isinstance(m, str) else " ".join(m) for m in tok["model"]["merges"]]
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("qwen2")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    w.add_eos_token_id(ids["<|im_end|>"])
    w.add_pad_token_id(ids["<|endoftext|>"])
    w.add_bos_token_id(ids["<|endoftext|>"])
    w.add_add_bos_token(False)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--layers", type=int, default=28)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    w = gguf.GGUFWriter(args.out, "qwen3")
    w.add_name("Qwen3-0.6B-shape random Q4_K_M")
    w.add_context_length(40960)
    w.add_embedding_length(HIDDEN)
    w.add_feed_forward_length(INTER)
    w.add_block_count(args.layers)
    w.add_head_count(HEADS)
    w.add_head_count_kv(KV_HEADS)
    w.add_key_length(HEAD_DIM)
    w.add_value_length(HEAD_DIM)
    w.add_rope_freq_base(1000000.0)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_Q4_K_M)
    tokenizer_kv(w)

    Q4K, Q6K = gguf.GGMLQuantizationType.Q4_K, gguf.GGMLQuantizationType.Q6_K
    checked = set()

    def matrix(name, rows, cols, qtype):
        x = (rng.standard_normal((rows, cols), dtype=np.float32) * 0.02).astype(np.float32)
        blocks = QUANT[qtype](x)
        if qtype not in checked:  # the blocks decode as gguf (llama.cpp's layout) reads them
            back = gguf.quants.dequantize(blocks[:4], qtype)
            err = np.abs(back - x[:4]).max()
            if not err < 0.01:
                raise SystemExit("%s: %s round trip error %g" % (name, qtype.name, err))
            checked.add(qtype)
        w.add_tensor(name, blocks, raw_dtype=qtype)

    def norm(name, n):
        w.add_tensor(name, np.ones(n, np.float32))

    matrix("token_embd.weight", VOCAB_SIZE, HIDDEN, Q6K)
    n = args.layers
    for i in range(n):
        p = "blk.%d." % i
        more = Q6K if use_more_bits(i, n) else Q4K
        norm(p + "attn_norm.weight", HIDDEN)
        matrix(p + "attn_q.weight", HEADS * HEAD_DIM, HIDDEN, Q4K)
        matrix(p + "attn_k.weight", KV_HEADS * HEAD_DIM, HIDDEN, Q4K)
        matrix(p + "attn_v.weight", KV_HEADS * HEAD_DIM, HIDDEN, more)
        matrix(p + "attn_output.weight", HIDDEN, HEADS * HEAD_DIM, Q4K)
        norm(p + "attn_q_norm.weight", HEAD_DIM)
        norm(p + "attn_k_norm.weight", HEAD_DIM)
        norm(p + "ffn_norm.weight", HIDDEN)
        matrix(p + "ffn_gate.weight", INTER, HIDDEN, Q4K)
        matrix(p + "ffn_up.weight", INTER, HIDDEN, Q4K)
        matrix(p + "ffn_down.weight", HIDDEN, INTER, more)
    norm("output_norm.weight", HIDDEN)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    print("wrote", args.out, os.path.getsize(args.out), "bytes")


if __name__ == "__main__":
    main()
