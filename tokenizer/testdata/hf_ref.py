"""Reference side of the tokenizer parity test and benchmark (Hugging Face
`tokenizers`, pinned in scripts/requirements-test.txt).

The Go tests run it live:  $CLAWRL_PYTHON tokenizer/testdata/hf_ref.py REQUEST.json
REQUEST.json: {"tokenizer": path to tokenizer.json,
               "mode": "parity" | "bench",
               "texts": [...], "decode": [[ids]...],   (parity)
               "chat_template": "...", "template_vars": {"bos_token": ...},
               "conversations": [{"messages", "tools",
                 "add_generation_prompt", "enable_thinking"}...]  (parity, optional)
               "text": "...", "seconds": 2.0,
               "cold": false}   (bench; cold clears BPE's word cache before each encode)
It prints one JSON object on stdout:
  parity: {"rendered": [...] the conversations rendered with chat_template
           (jinja2 set up like transformers' apply_chat_template), appended
           to texts,
           "ids": [[...]] per text (encode, add_special_tokens=False),
           "decoded": [...] decode of those ids, "decoded_skip": [...] the same
           with skip_special_tokens=True, "decode": [...], "decode_skip": [...]
           for the given id lists}
  bench:  {"iterations": n, "seconds": s, "tokens": tokens per iteration}
"""
import json
import sys
import time

import jinja2
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment
from tokenizers import Tokenizer


def render_all(template: str, conversations: list, template_vars: dict) -> list:
    """Renders like transformers' apply_chat_template(tokenize=False)."""

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    compiled = env.from_string(template)
    out = []
    for conv in conversations:
        kwargs = dict(template_vars)
        kwargs.update(messages=conv["messages"], tools=conv.get("tools"),
                      add_generation_prompt=conv.get("add_generation_prompt", True))
        if "enable_thinking" in conv:
            kwargs["enable_thinking"] = conv["enable_thinking"]
        out.append(compiled.render(**kwargs))
    return out


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
    rendered = render_all(req["chat_template"], req["conversations"], req.get("template_vars", {})) if req.get("conversations") else []
    encs = tok.encode_batch(req["texts"] + rendered, add_special_tokens=False)
    ids = [e.ids for e in encs]
    out = {
        "rendered": rendered,
        "ids": ids,
        "decoded": tok.decode_batch(ids, skip_special_tokens=False),
        "decoded_skip": tok.decode_batch(ids, skip_special_tokens=True),
        "decode": tok.decode_batch(req.get("decode", []), skip_special_tokens=False),
        "decode_skip": tok.decode_batch(req.get("decode", []), skip_special_tokens=True),
    }
    json.dump(out, sys.stdout, ensure_ascii=True)


if __name__ == "__main__":
    main()
