"""Reference for chatfmt's parity tests: transformers' apply_chat_template.

Reads JSON on stdin:
  {"config": "<tokenizer_config.json path>",
   "template": "<.jinja path or null: use the config's chat_template>",
   "cases": [{"messages": [OpenAI-style message dicts],
              "tools": [tool dicts] | null,
              "add_generation_prompt": bool,
              "enable_thinking": bool (optional),
              "arguments_as_mapping": bool (optional)}]}
and writes [{"out": str} | {"error": str}] as JSON on stdout.

Messages are passed as a client sends them, with two documented steps that
chatfmt.MessageValues mirrors: "content": null becomes "" (Qwen3's template
fails on a missing content), and with arguments_as_mapping a tool call's
JSON-string arguments are decoded (vLLM's behaviour). Everything else —
dropping None keys, aliasing reasoning fields, special tokens, tools — is
transformers' own code.

The tokenizer is PreTrainedTokenizerFast with the config's special tokens and
a one-word vocabulary: apply_chat_template(tokenize=False) never reads the
vocabulary, so the 11 MB tokenizer.json is not needed.

Run by chatfmt's tests through $CLAWRL_PYTHON (scripts/requirements-test.txt:
transformers, tokenizers, jinja2; no torch).
"""
import json
import sys

from tokenizers import Tokenizer
from tokenizers.models import WordLevel
from transformers import PreTrainedTokenizerFast

SPECIAL = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")


def special_tokens(config):
    out = {}
    for key in SPECIAL:
        value = config.get(key)
        if isinstance(value, dict):
            value = value.get("content")
        if isinstance(value, str):
            out[key] = value
    return out


def prepare(messages, as_mapping):
    out = []
    for message in messages:
        message = dict(message)
        if "content" in message and message["content"] is None:
            message["content"] = ""
        if as_mapping and message.get("tool_calls"):
            calls = []
            for call in message["tool_calls"]:
                call = dict(call)
                fn = dict(call["function"])
                args = fn.get("arguments")
                if isinstance(args, str):
                    try:
                        decoded = json.loads(args)
                    except ValueError:
                        decoded = None
                    if isinstance(decoded, dict):
                        fn["arguments"] = decoded
                call["function"] = fn
                calls.append(call)
            message["tool_calls"] = calls
        out.append(message)
    return out


def main():
    request = json.load(sys.stdin)
    with open(request["config"], encoding="utf-8") as f:
        config = json.load(f)
    template = config.get("chat_template")
    if request.get("template"):
        with open(request["template"], encoding="utf-8") as f:
            template = f.read()
    tok = PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer(WordLevel({"<unk>": 0}, unk_token="<unk>")),
        **special_tokens(config),
    )
    tok.chat_template = template
    results = []
    for case in request["cases"]:
        kwargs = {}
        if "enable_thinking" in case:
            kwargs["enable_thinking"] = case["enable_thinking"]
        try:
            out = tok.apply_chat_template(
                prepare(case["messages"], case.get("arguments_as_mapping", False)),
                tools=case.get("tools"),
                add_generation_prompt=case["add_generation_prompt"],
                tokenize=False,
                **kwargs,
            )
            results.append({"out": out})
        except Exception as e:  # the Go side checks that both sides fail
            results.append({"error": f"{type(e).__name__}: {e}"})
    json.dump(results, sys.stdout, ensure_ascii=False)


if __name__ == "__main__":
    main()
