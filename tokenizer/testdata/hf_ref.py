"""Reference side of the tokenizer parity test and benchmark (Hugging Face
`tokenizers`, pinned in scripts/requirements-test.txt).

The Go tests run it live:  $CLAWRL_PYTHON tokenizer/testdata/hf_ref.py REQUEST.json
REQUEST.json: {"tokenizer": path to tokenizer.json,
               "mode": "parity" | "bench",
               "texts": [...], "decode": [[ids]...],   (parity)
               "text": "...", "seconds": 2.0,
               "cold": false}   (bench; cold clears BPE's word cache before each encode)
It prints one JSON object on stdout:
  parity: {"ids": [[...]] per text (encode, add_special_tokens=False),
           "decoded": [...] decode of those ids, "decoded_skip": [...] the same
           with skip_special_tokens=True, "decode": [...], "decode_skip": [...]
           for the given id lists}
  bench:  {"iterations": n, "seconds": s, "tokens": tokens per iteration}
"""
import json
import sys
import time

from tokenizers import Tokenizer


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as f:
        req = json.load(f)
    tok = Tokenizer.from_file(req["tokenizer"])
    if req["mode"] == "bench":
        text = req["text"]
        tok.encode(text, add_special_tokens=False)  # warm up
        n, start = 0, time.perf_counter()
        deadline = start + float(req.get("seconds", 2.0))
        tokens = 0
        cold = bool(req.get("cold", False))
        while True:
            if cold:
                tok.model._clear_cache()
            tokens = len(tok.encode(text, add_special_tokens=False).ids)
            n += 1
            if time.perf_counter() >= deadline:
                break
        json.dump({"iterations": n, "seconds": time.perf_counter() - start, "tokens": tokens}, sys.stdout)
        return
    encs = tok.encode_batch(req["texts"], add_special_tokens=False)
    ids = [e.ids for e in encs]
    out = {
        "ids": ids,
        "decoded": tok.decode_batch(ids, skip_special_tokens=False),
        "decoded_skip": tok.decode_batch(ids, skip_special_tokens=True),
        "decode": tok.decode_batch(req.get("decode", []), skip_special_tokens=False),
        "decode_skip": tok.decode_batch(req.get("decode", []), skip_special_tokens=True),
    }
    json.dump(out, sys.stdout, ensure_ascii=True)


if __name__ == "__main__":
    main()
