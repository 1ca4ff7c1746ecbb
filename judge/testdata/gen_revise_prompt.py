"""Reference for judge.TestRevisePromptRendered: the revise teacher's prompt
(--hint-placement revise) rendered by transformers' apply_chat_template with
Qwen2.5's real tokenizer.json and chat template (tokenizer/vocab/qwen2), and
its token ids from that tokenizer.

    python3 judge/testdata/gen_revise_prompt.py > judge/testdata/revise_prompt_qwen2.json

Needs transformers and tokenizers (the shared reference venv has them).
"""
import gzip
import json
import os
import sys

from transformers import PreTrainedTokenizerFast

here = os.path.dirname(os.path.abspath(__file__))
vocab = os.path.join(here, "..", "..", "tokenizer", "vocab", "qwen2")
config = json.loads(gzip.open(os.path.join(vocab, "tokenizer_config.json.gz")).read())
tok_json = gzip.open(os.path.join(vocab, "tokenizer.json.gz")).read().decode()
tmp = os.path.join(os.environ.get("TMPDIR", "/tmp"), "clawrl-revise-tokenizer.json")
with open(tmp, "w") as f:
    f.write(tok_json)
tok = PreTrainedTokenizerFast(tokenizer_file=tmp, chat_template=config["chat_template"],
                              eos_token=config.get("eos_token"), pad_token=config.get("pad_token"))

question = "How do I boil an egg?"
answer = "Boiling an egg is simple: place it in boiling water for 9 minutes, then cool it in cold water."
hint = 'Be brief. Your last words must be "Hope this helps!"'
cases = [
    # a one-turn question, as the benchmark's personas ask
    {"name": "one turn",
     "messages": [{"role": "user", "content": question}],
     "answer": answer, "hint": hint},
    # a system prompt and an earlier exchange: the revision follows the
    # whole conversation
    {"name": "system and history",
     "messages": [{"role": "system", "content": "You are terse."},
                  {"role": "user", "content": "Hi"},
                  {"role": "assistant", "content": "Hello! How can I help?"},
                  {"role": "user", "content": question}],
     "answer": answer, "hint": "Too long, just give me the short version."},
]
for c in cases:
    msgs = c["messages"] + [{"role": "assistant", "content": c["answer"]}, {"role": "user", "content": c["hint"]}]
    text = tok.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
    c["want_text"] = text
    c["want_ids"] = tok.encode(text, add_special_tokens=False)
json.dump(cases, sys.stdout, indent=1, ensure_ascii=False)
sys.stdout.write("\n")
