"""Counts the CPU seconds a fit has cost, across resumes.

On a CPU-only machine a run's cost is its CPU time, and long runs (grounding) are stopped and resumed from
``last.ckpt``. A process can count only itself, so the seconds of earlier processes travel in the checkpoint
as this callback's state. Written by hand: Lightning's ``Timer`` keeps wall-clock time only.
"""

from __future__ import annotations

from typing import Any

import lightning.pytorch as pl

from imaginebench.processes import process_cpu_s


class CpuTime(pl.Callback):
    """``cpu_s``: CPU seconds of every process of this run so far, this one from its start (imports and data
    loading included, as a one-process run's total would be).

    A resumed run adds what the checkpoint it resumed from had counted; the work an earlier process did after
    its last checkpoint is redone, and its seconds are not counted."""

    def __init__(self) -> None:
        self.earlier_s = 0.0

    @property
    def cpu_s(self) -> float:
        return self.earlier_s + process_cpu_s()

    def state_dict(self) -> dict[str, Any]:
        return {"cpu_s": self.cpu_s}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.earlier_s = float(state_dict["cpu_s"])


def checkpoint_cpu_s(checkpoint: dict[str, Any]) -> float | None:
    """The CPU seconds a checkpoint's :class:`CpuTime` had counted, or ``None`` without one."""
    state = checkpoint.get("callbacks", {}).get(CpuTime.__qualname__)
    return None if state is None else float(state["cpu_s"])
