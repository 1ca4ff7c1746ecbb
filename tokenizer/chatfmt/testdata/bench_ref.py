"""Times the reference side of chatfmt's BenchmarkRenderOpenClaw.

Reads the same request as apply_ref.py (with exactly one case) plus
"iterations", renders that case repeatedly with transformers'
apply_chat_template(tokenize=False) and with the compiled jinja2 template
alone, and prints {"transformers_ns": per-render ns, "jinja2_ns": per-render ns,
"chars": rendered length} as JSON.
"""
import json
import sys
import time

from apply_ref import prepare, special_tokens
from tokenizers import Tokenizer
from tokenizers.models import WordLevel
from transformers import PreTrainedTokenizerFast
from transformers.utils.chat_template_utils import _compile_jinja_template


def per_call_ns(fn, iterations):
    fn()  # warm up (template compilation is cached after the first call)
    start = time.perf_counter_ns()
    for _ in range(iterations):
        fn()
    return (time.perf_counter_ns() - start) / iterations


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
    (case,) = request["cases"]
    messages = prepare(case["messages"], case.get("arguments_as_mapping", False))
    iterations = request.get("iterations", 50)

    def with_transformers():
        return tok.apply_chat_template(messages, tools=case.get("tools"),
                                       add_generation_prompt=case["add_generation_prompt"], tokenize=False)

    compiled = _compile_jinja_template(template)
    plain = [{k: v for k, v in m.items() if v is not None} for m in messages]

    def with_jinja2():
        return compiled.render(messages=plain, tools=case.get("tools"), documents=None,
                               add_generation_prompt=case["add_generation_prompt"], **tok.special_tokens_map)

    out = with_transformers()
    json.dump({
        "transformers_ns": per_call_ns(with_transformers, iterations),
        "jinja2_ns": per_call_ns(with_jinja2, iterations),
        "chars": len(out),
    }, sys.stdout)


if __name__ == "__main__":
    main()
