# llama.cpp side of `clawrl bench model --llamacpp PYTHON`: converts the
# Hugging Face checkpoint to GGUF with llama.cpp's own convert_hf_to_gguf.py
# and runs the same prefill and decode measurements with llama.cpp through
# xllamacpp (PyPI's prebuilt CPU wheel of llama.cpp's server). Reads a JSON
# spec on stdin, prints one JSON result line on stdout. When xllamacpp or the
# converter is missing it prints {"skip": reason} and exits 0, so the Go side
# can say why and go on.
#
# Setup (a separate venv that sees the global torch/transformers the
# converter needs):
#   python3 -m venv --system-site-packages /tmp/llamacpp-venv
#   /tmp/llamacpp-venv/bin/pip install xllamacpp==2026.10.11549 sentencepiece==0.2.1
#   convert_hf_to_gguf.py, conversion/ and gguf-py/ from
#   thirdparty/llama.cpp in the xllamacpp sdist (2026.9.11063 is the newest
#   sdist); pip install its gguf-py (PyPI's gguf 0.19.0 lags the converter).
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time

spec = json.load(sys.stdin)


def skip(reason):
    print(json.dumps({"skip": reason}))
    sys.exit(0)


try:
    import xllamacpp
except ImportError as e:
    skip("%s cannot import xllamacpp (%s): see cmd/clawrl/bench_model_llamacpp_setup.sh" % (sys.executable, e))
convert = spec.get("convert") or ""


def is_gguf(path):
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"GGUF"
    except OSError:
        return False


# A GGUF file is measured as it is (its own quantization); a Hugging Face
# folder is converted first.
given_gguf = is_gguf(spec["model"])
if not given_gguf and not os.path.isfile(convert):
    skip("llama.cpp's convert_hf_to_gguf.py not found at %r (--llamacpp-convert)" % convert)

prompts = spec["prompts"]
n_decode = spec["decode"]
threads = spec["threads"]
batch = len(prompts) - 1
# The CPU build keeps bf16 weights as bf16 (GGML_TYPE_BF16 matmuls).
outtype = "bf16" if spec["dtype"] == "bf16" else "f32"

with tempfile.TemporaryDirectory(prefix="clawrl-gguf-") as tmp:
    gguf = os.path.join(tmp, "model-%s.gguf" % outtype)
    if given_gguf:
        gguf = spec["model"]
    else:
        conv = subprocess.run([sys.executable, convert, spec["model"], "--outtype", outtype, "--outfile", gguf],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if conv.returncode != 0:
            sys.stderr.write(conv.stdout[-4000:])
            sys.exit("convert_hf_to_gguf.py failed with status %d" % conv.returncode)

    params = xllamacpp.CommonParams()
    params.model.path = gguf
    per_seq = len(prompts[0]) + n_decode + 16
    params.n_parallel = max(1, batch)
    params.n_ctx = per_seq * params.n_parallel
    # One batch holds all batched prompts, so the slots prefill together and
    # then decode in lockstep: their generation phases overlap exactly.
    params.n_batch = max(512, len(prompts[0]) * params.n_parallel)
    params.n_ubatch = params.n_batch
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    server = xllamacpp.Server(params)

    def complete(ids, n, **extra):
        req = {"prompt": ids, "n_predict": n, "temperature": 0, "ignore_eos": True, "cache_prompt": False}
        req.update(extra)
        r = server.handle_completions(req)
        if "timings" not in r:
            raise RuntimeError("llama.cpp: %s" % json.dumps(r)[:500])
        return r

    complete(prompts[0][:8], 4)  # warm up (page in the weights)
    # Timings are llama.cpp's own: prompt_per_second is prefill, and
    # predicted_per_second counts every generated token over the time after
    # prefill (the first comes from the prefill logits).
    t = complete(prompts[0], n_decode)["timings"]
    prefill, single = t["prompt_per_second"], t["predicted_per_second"]

    # Greedy ids for the correctness check, in a separate request since
    # asking for probabilities costs time. ignore_eos (right for timing a
    # fixed number of tokens) makes llama.cpp set every end-of-generation
    # token's logit to -inf, so with it the ids leave clawrl's and
    # transformers' (which mask nothing) as soon as <|im_end|> is the argmax:
    # here llama.cpp stops there instead, and the Go side compares the ids
    # up to that point.
    r = complete(prompts[0], min(8, n_decode), n_probs=1, ignore_eos=False)
    first_ids = [c["id"] for c in r["choices"][0]["logprobs"]["content"]]

    batched = 0.0
    if batch > 0:
        results = [None] * batch

        def run(i):
            results[i] = complete(prompts[i + 1], n_decode)["timings"]

        ts = [threading.Thread(target=run, args=(i,)) for i in range(batch)]
        for th in ts:
            th.start()
        for th in ts:
            th.join()
        if any(r is None for r in results):
            sys.exit("a batched request failed")
        batched = sum(r["predicted_n"] for r in results) / (max(r["predicted_ms"] for r in results) / 1000)
    # Peak resident memory of this process (llama.cpp runs in it; the
    # converter ran as a child and does not count), in MiB.
    peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    del server

print(json.dumps({"engine": "llama.cpp (xllamacpp %s)" % xllamacpp.__version__,
                  "prefill_tok_s": prefill, "decode_tok_s": single, "batch_decode_tok_s": batched,
                  "first_ids": first_ids, "peak_rss_mib": peak_rss}))
