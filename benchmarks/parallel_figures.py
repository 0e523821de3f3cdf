"""The stored form of a one-process vs N-worker timing (``collect_speed.py``, ``evaluation_speed.py``),
which ``imaginebench report --parallel`` turns into a table."""

from __future__ import annotations

import json
from pathlib import Path

from imaginebench.provenance import machine_name, source_commit
from imaginebench.storage import atomic_write_text


def write_parallel_figures(out: Path, env_id: str, workers: int, timings: list[tuple[str, float, float]]) -> None:
    """``timings``: (what was timed, seconds in one process, seconds with ``workers``), all from one run."""
    figures = {
        "env": env_id,
        "workers": workers,
        "timings": [{"job": job, "one": one, "many": many} for job, one, many in timings],
        "commit": source_commit(),
        "cpu": machine_name(),
    }
    atomic_write_text(json.dumps(figures, indent=2), out)
