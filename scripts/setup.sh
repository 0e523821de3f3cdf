#!/usr/bin/env bash
# Create .venv (if missing) and install imaginebench with its pinned dependencies.
# torch is installed first, alone, so no other package can pull a different (CUDA) build;
# constraints.txt then pins every other package to the tested set.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv --help >/dev/null
[ -x .venv/bin/python ] || python3 -m venv .venv
stamp=.venv/.imaginebench-installed
want=$(cat pyproject.toml constraints.txt | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  .venv/bin/python -m pip install -q -U pip
  .venv/bin/python -m pip install -q torch==2.13.0
  .venv/bin/python -m pip install -q -c constraints.txt -e '.[test]'
  echo "$want" > "$stamp"
fi
