"""Training time without the warm-up updates (first-call allocations, lazy initialisation)."""

from __future__ import annotations

import time

import lightning.pytorch as pl
from matrix_flops import synchronize  # benchmarks/ is on sys.path


class Stopwatch(pl.Callback):
    """Seconds from the end of batch ``warmup`` to the end of the last batch (on a GPU, of its queued work)."""

    def __init__(self, warmup: int) -> None:
        self.warmup, self.start, self.stop = warmup, 0.0, 0.0

    def on_train_batch_end(self, trainer: pl.Trainer, *args) -> None:
        synchronize(trainer.strategy.root_device)
        if trainer.global_step == self.warmup:
            self.start = time.perf_counter()
        self.stop = time.perf_counter()

    def updates_per_second(self, total_updates: int) -> float:
        return (total_updates - self.warmup) / (self.stop - self.start)
