"""Which code and which machine produced a result: the git commit of the checkout and the CPU, so a stored figure
can be traced to its source and a timing to the hardware it was taken on."""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]


def source_commit() -> str | None:
    """``HEAD``'s commit, with ``-dirty`` when tracked files differ from it; ``None`` outside a git checkout."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=REPOSITORY, capture_output=True, text=True, check=True, timeout=10
        ).stdout.strip()
        changed = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=REPOSITORY,
            capture_output=True,
            text=True,
            check=True,
            timeout=30,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{commit}-dirty" if changed else commit


BFLOAT16_UNITS = {"amx_bf16": "AMX", "avx512_bf16": "AVX512-BF16"}
"""``/proc/cpuinfo`` flag → the bfloat16 matrix units it names, best first: they decide what bf16 costs on a CPU."""


def _cpuinfo() -> tuple[str, str]:
    """The CPU's model name and flags from ``/proc/cpuinfo`` (empty strings where it cannot be read)."""
    model, flags = "", ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name") and not model:
                model = line.split(":", 1)[1].strip()
            elif line.startswith("flags") and not flags:
                flags = line.split(":", 1)[1]
    except OSError:
        pass
    return model, flags


def cpu_bfloat16_units() -> str | None:
    """``"AMX"``, ``"AVX512-BF16"``, ``""`` where the CPU has neither (its bfloat16 products then run far slower than
    float32: 1.3 against 68.8 GFLOP/s on an AVX2-only AMD EPYC), or ``None`` where ``/proc/cpuinfo`` does not say."""
    return _bfloat16_units(_cpuinfo()[1])


def _bfloat16_units(flags: str) -> str | None:
    """:func:`cpu_bfloat16_units` from the flags line already read."""
    present = flags.split()
    if not present:
        return None
    return next((units for flag, units in BFLOAT16_UNITS.items() if flag in present), "")


def machine_name() -> str:
    """The CPU's model name (``/proc/cpuinfo`` where Linux has it, else the platform's processor string), its
    bfloat16 matrix units if any (:func:`cpu_bfloat16_units`: two "AMD EPYC"s' bf16 products ran at 484 and 1.3
    GFLOP/s) and how many cores this process may use: ``"Intel(R) Xeon(R) Processor with AMX, 2 cores"``."""
    model, flags = _cpuinfo()
    model = model or platform.processor() or platform.machine()
    units = _bfloat16_units(flags)
    cores = affinity_cores()
    return f"{model}{f' with {units}' if units else ''}, {cores} core{'s' if cores != 1 else ''}"


def affinity_cores() -> int:
    """The cores this process may run on: its affinity mask where the OS has one, else the machine's count."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
