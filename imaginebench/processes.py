"""Worker processes of collection and evaluation, and the CPU seconds of this process and its waited-for children."""

from __future__ import annotations

import multiprocessing
import os
import resource
from multiprocessing.context import SpawnContext

import torch

from imaginebench.provenance import affinity_cores

CORES_VARIABLE = "IMAGINEBENCH_CORES"
"""Caps the default worker count: a sweep cell sets it to the threads it was given, so that cells
running side by side do not each start a worker per core of the machine."""


def available_cores() -> int:
    """The cores this process may run on (its affinity mask where the OS has one, capped by
    ``$IMAGINEBENCH_CORES``): the default worker count, one single-threaded worker per core."""
    cores = affinity_cores()
    cap = os.environ.get(CORES_VARIABLE, "")
    return max(1, min(cores, int(cap))) if cap.isdigit() else cores


def spawn_context() -> SpawnContext:
    """Workers are spawned, not forked: torch's threads and the simulators' state are not fork-safe."""
    return multiprocessing.get_context("spawn")


def use_one_thread() -> None:
    """Each worker is one process on one core: a second thread per worker only competes with the
    other workers (and makes torch's spin-waiting threads slow everything down)."""
    os.environ["OMP_NUM_THREADS"] = "1"
    os.environ["MKL_NUM_THREADS"] = "1"
    torch.set_num_threads(1)


def process_cpu_s() -> float:
    """User + system CPU seconds of this process and of its children that have been waited for."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
