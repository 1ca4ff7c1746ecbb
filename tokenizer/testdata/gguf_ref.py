"""Reference side of the GGUF tokenizer parity test (tokenizer/gguf_parity_test.go).

    python gguf_ref.py vocab TOKENIZER.json TOKENIZER_CONFIG.json PRE OUT.gguf
        Writes a vocabulary-only GGUF the way llama.cpp's convert_hf_to_gguf.py
        does for a byte-level BPE model (tokens in id order, types NORMAL /
        CONTROL for special added tokens and <|…|> / USER_DEFINED for other
        added tokens, merges "a b", tokenizer.ggml.pre, bos/eos, template).
        Needs only the gguf package; deterministic, so the file the test
        builds is the one the fixture was made from.
    python gguf_ref.py hf GGUF TEXTS.json LLAMACPP.json.gz OUT.json.gz
        transformers' GGUF tokenizer (AutoTokenizer.from_pretrained(dir,
        gguf_file=...), encode with add_special_tokens=False) on each text;
        writes {"sha256", "differ": {index: ids}}: its ids where they differ
        from llama.cpp's fixture (transformers' GGUF reader needs torch, which
        the test venv does not have, so this is a committed fixture too).
    python gguf_ref.py llamacpp GGUF TEXTS.json OUT.json
        llama.cpp's own tokenizer (xllamacpp's server, /tokenize with
        parse_special) on each text; for a vocabulary-only GGUF it first adds
        tiny random weights, which the tokenizer does not read. Writes
        {"sha256": of TEXTS.json, "ids": [[...]]} (gzip when OUT ends in .gz).
        Run with the reference venv that has xllamacpp:
        /root/.cache/clawrl/refvenv/bin/python.
"""
import gzip
import hashlib
import json
import os
import sys
import tempfile


def vocab(tokenizer_json, config_json, pre, out):
    import gguf
    tok = json.load(open(tokenizer_json, encoding="utf-8"))
    cfg = json.load(open(config_json, encoding="utf-8"))
    vocab = dict(tok["model"]["vocab"])
    added = {a["content"]: a for a in tok.get("added_tokens", [])}
    for a in tok.get("added_tokens", []):
        vocab.setdefault(a["content"], a["id"])
    reverse = {i: t for t, i in vocab.items()}
    n = max(reverse) + 1
    tokens, types = [], []
    for i in range(n):
        t = reverse.get(i)
        if t is None:
            tokens.append("[PAD%d]" % i)
            types.append(gguf.TokenType.UNUSED)
        elif t in added:
            tokens.append(t)
            looks = t.startswith("<|") and t.endswith("|>")
            types.append(gguf.TokenType.CONTROL if added[t]["special"] or looks else gguf.TokenType.USER_DEFINED)
        else:
            tokens.append(t)
            types.append(gguf.TokenType.NORMAL)
    merges = [m if isinstance(m, str) else " ".join(m) for m in tok["model"]["merges"]]

    def special(name):
        v = cfg.get(name)
        if isinstance(v, dict):
            v = v.get("content")
        return vocab.get(v) if v else None

    w = gguf.GGUFWriter(out, arch="llama")
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre(pre)
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    if special("bos_token") is not None:
        w.add_bos_token_id(special("bos_token"))
    if special("eos_token") is not None:
        w.add_eos_token_id(special("eos_token"))
    w.add_add_bos_token(False)
    if cfg.get("chat_template"):
        w.add_chat_template(cfg["chat_template"])
    return w, len(tokens)


def cmd_vocab(args):
    w, _ = vocab(*args)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def cmd_hf(gguf_path, texts_path, llamacpp_fixture, out):
    from transformers import AutoTokenizer
    d, f = os.path.split(os.path.abspath(gguf_path))
    tok = AutoTokenizer.from_pretrained(d, gguf_file=f)
    raw = open(texts_path, "rb").read()
    texts = json.loads(raw)
    cpp = json.loads(gzip.decompress(open(llamacpp_fixture, "rb").read()))
    assert cpp["sha256"] == hashlib.sha256(raw).hexdigest(), "llama.cpp fixture is from another corpus"
    differ = {}
    for i, t in enumerate(texts):
        ids = tok.encode(t, add_special_tokens=False)
        if ids != cpp["ids"][i]:
            differ[str(i)] = ids
    doc = json.dumps({"sha256": cpp["sha256"], "differ": differ}, separators=(",", ":")).encode()
    open(out, "wb").write(gzip.compress(doc, mtime=0))


def with_weights(gguf_path, tmp):
    """A copy of a vocabulary-only GGUF with a tiny random llama attached."""
    import gguf
    import numpy as np
    r = gguf.GGUFReader(gguf_path)
    if r.tensors:
        return gguf_path
    out = os.path.join(tmp, "with-weights.gguf")
    w = gguf.GGUFWriter(out, arch="llama")
    n = 0
    for field in r.fields.values():
        if not field.name.startswith("tokenizer."):
            continue
        v = field.contents()
        if field.name == "tokenizer.ggml.tokens":
            n = len(v)
        if field.types[0] == gguf.GGUFValueType.ARRAY:
            w.add_array(field.name, v)
        elif field.types[0] == gguf.GGUFValueType.STRING:
            w.add_string(field.name, v)
        elif field.types[0] == gguf.GGUFValueType.BOOL:
            w.add_bool(field.name, v)
        else:
            w.add_uint32(field.name, int(v))
    H = 32
    w.add_context_length(256)
    w.add_embedding_length(H)
    w.add_block_count(1)
    w.add_feed_forward_length(H)
    w.add_head_count(1)
    w.add_head_count_kv(1)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_dimension_count(H)
    w.add_vocab_size(n)
    rng = np.random.default_rng(0)
    w.add_tensor("token_embd.weight", rng.standard_normal((n, H)).astype(np.float16))
    w.add_tensor("output_norm.weight", np.ones(H, np.float32))
    for name in ("attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"):
        w.add_tensor("blk.0.%s.weight" % name, rng.standard_normal((H, H)).astype(np.float32))
    w.add_tensor("blk.0.attn_norm.weight", np.ones(H, np.float32))
    w.add_tensor("blk.0.ffn_norm.weight", np.ones(H, np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return out


def cmd_llamacpp(gguf_path, texts_path, out):
    import urllib.request
    import xllamacpp
    raw = open(texts_path, "rb").read()
    texts = json.loads(raw)
    with tempfile.TemporaryDirectory() as tmp:
        p = xllamacpp.CommonParams()
        p.model.path = with_weights(gguf_path, tmp)
        p.port = 30795
        p.n_ctx = 256
        p.cpuparams.n_threads = 2
        server = xllamacpp.Server(p)
        ids = []
        for t in texts:
            req = urllib.request.Request("http://127.0.0.1:30795/tokenize", headers={"Content-Type": "application/json"},
                                         data=json.dumps({"content": t, "add_special": False, "parse_special": True}).encode())
            ids.append(json.loads(urllib.request.urlopen(req).read())["tokens"])
        del server
    doc = json.dumps({"sha256": hashlib.sha256(raw).hexdigest(), "ids": ids}, separators=(",", ":")).encode()
    if out.endswith(".gz"):
        doc = gzip.compress(doc, mtime=0)
    open(out, "wb").write(doc)


if __name__ == "__main__":
    mode, args = sys.argv[1], sys.argv[2:]
    {"vocab": cmd_vocab, "hf": cmd_hf, "llamacpp": cmd_llamacpp}[mode](*args) if mode != "vocab" else cmd_vocab(args)
