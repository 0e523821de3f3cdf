#!/usr/bin/env bash
# Create .venv-peer: the project plus d3rlpy 2.8.1, for benchmarks/peer_check.py only.
# d3rlpy 2.8.1 pins gymnasium==1.0.0 while imaginebench pins gymnasium==1.4.0, so d3rlpy cannot be a
# project dependency. It only needs gymnasium for its online-training helpers, which the peer check
# never calls, so it is installed with --no-deps next to the project's pinned set, and its
# pure-Python dependencies are added by hand (it also imports the old `gym` package for its space
# types). Never run this against .venv.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv-peer/bin/python ] || python3 -m venv .venv-peer
.venv-peer/bin/python -m pip install -q -U pip
.venv-peer/bin/python -m pip install -q torch==2.13.0
.venv-peer/bin/python -m pip install -q -c constraints.txt -e .
.venv-peer/bin/python -m pip install -q d3rlpy==2.8.1 --no-deps
.venv-peer/bin/python -m pip install -q -c constraints.txt h5py structlog colorama dataclasses-json tqdm click typing_extensions gym==0.26.2
.venv-peer/bin/python -c "import d3rlpy, imaginebench; print('d3rlpy', d3rlpy.__version__)"
