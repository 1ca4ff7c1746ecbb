#!/usr/bin/env bash
# Installs llama.cpp for `clawrl bench model --llamacpp`, from PyPI only.
# Optional: scripts/test and CI do not use it.
#
#   cmd/clawrl/bench_model_llamacpp_setup.sh [DIR]     (default /tmp/llamacpp-venv)
#   clawrl bench model --size tiny --threads 2 --reference \
#     --llamacpp DIR/bin/python --llamacpp-convert DIR/convert/convert_hf_to_gguf.py
#
# llama.cpp itself: xllamacpp's prebuilt manylinux CPU wheel (llama.cpp's
# server and ggml, AVX2 build; nothing is compiled here). The GGUF converter
# (convert_hf_to_gguf.py with its conversion/ package and the matching
# gguf-py) is not in any wheel: it comes from thirdparty/llama.cpp in the
# newest xllamacpp sdist (2026.9.11063; 2026.10.11549 has no sdist), fetched
# with `pip download` (pip's own index; nothing is built: pip only runs the
# sdist's metadata step, which needs Cython, installed beforehand so no
# isolated build environment is made) and checked against its sha256.
# A GGUF file given to `bench model --model` needs neither: xllamacpp
# alone measures it. PyPI's gguf 0.19.0
# is older than that converter (no MODEL_ARCH.DFLASH), so gguf-py is
# installed from the sdist. The venv sees the global torch and transformers,
# which the converter needs.
set -euo pipefail
dir=${1:-/tmp/llamacpp-venv}
python3 -m venv --system-site-packages "$dir"
"$dir/bin/pip" install xllamacpp==2026.10.11549 sentencepiece==0.2.1

sdist=xllamacpp-2026.9.11063
sum=37ad3d0389f1d65b68e7d341df86d55077158950a764801be94f955024afb759
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$dir/bin/pip" install Cython==3.3.1 setuptools wheel
"$dir/bin/pip" download --no-deps --no-binary :all: --no-build-isolation -d "$tmp" xllamacpp==2026.9.11063
mv "$tmp/$sdist.tar.gz" "$tmp/sdist.tar.gz"
echo "$sum  $tmp/sdist.tar.gz" | sha256sum -c -
l=$sdist/thirdparty/llama.cpp
tar -xzf "$tmp/sdist.tar.gz" -C "$tmp" "$l/convert_hf_to_gguf.py" "$l/conversion" "$l/gguf-py"
rm -rf "$dir/convert"
mkdir -p "$dir/convert"
cp -r "$tmp/$l/convert_hf_to_gguf.py" "$tmp/$l/conversion" "$tmp/$l/gguf-py" "$dir/convert/"
"$dir/bin/pip" install --no-deps --force-reinstall "$dir/convert/gguf-py"
"$dir/bin/python" -c 'import xllamacpp, gguf, torch, transformers, sentencepiece; print("xllamacpp", xllamacpp.__version__)'
echo "converter: $dir/convert/convert_hf_to_gguf.py"
