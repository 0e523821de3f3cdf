"""What each stage of ``imaginebench pipeline`` cost: wall and CPU seconds, kept in ``<out>/stage_costs.json``.

On a CPU-only machine a stage's cost is its CPU time (this process and the worker processes it waited for), and
a pipeline is stopped and resumed stage by stage: each stage's figures are written as soon as it ends, and a
stage kept from an earlier run keeps the figures that run wrote.
"""

from __future__ import annotations

import json
import platform
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from imaginebench.processes import process_cpu_s
from imaginebench.storage import atomic_write_text

FILE_NAME = "stage_costs.json"


def machine_name() -> str:
    """The CPU's model name where Linux reports it (``/proc/cpuinfo``), else the platform's processor string."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


class StageCosts:
    """The cost file of one pipeline directory: read on start, rewritten after every stage."""

    def __init__(self, out: Path, env_id: str) -> None:
        self.path = out / FILE_NAME
        self.content: dict[str, Any] = {"env_id": env_id, "stages": {}}
        if self.path.is_file():
            earlier = json.loads(self.path.read_text())
            if earlier.get("env_id") == env_id:
                self.content["stages"] = earlier.get("stages", {})

    @contextmanager
    def measure(self, stage: str, work: str) -> Iterator[None]:
        """Times the block and records it as ``stage``; ``work`` says how much it did (``"700 rollouts"``)."""
        wall, cpu = time.perf_counter(), process_cpu_s()
        yield
        cpu_s, wall_s = process_cpu_s() - cpu, time.perf_counter() - wall
        record = {"work": work, "cpu_s": cpu_s, "wall_s": wall_s, "machine": machine_name()}
        self.content["stages"][stage] = record
        atomic_write_text(json.dumps(self.content, indent=1) + "\n", self.path)


def format_stage_costs(content: dict[str, Any]) -> str:
    """The file as a plain table, printed at the end of a pipeline."""
    rows = [f"{'stage':<18}{'CPU min':>9}{'wall min':>10}  work"]
    for stage, record in content["stages"].items():
        rows.append(f"{stage:<18}{record['cpu_s'] / 60:>9.1f}{record['wall_s'] / 60:>10.1f}  {record['work']}")
    return "\n".join(rows)
