"""How many matrix-product operations an update does, and how fast this CPU runs such products: the two halves of
an update's fraction of peak (``peer_speed.py``, ``update_profile.py``)."""

from __future__ import annotations

import time

import lightning.pytorch as pl
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import flop_registry

PRODUCT_SHAPES = ((256, 475, 256), (256, 256, 256), (2560, 256, 256))
"""Batch × in × out of the networks' products: a first layer on state ⊕ instruction embedding, a
hidden layer, a hidden layer over ten sampled actions per state (CQL, BCQ)."""


def product_throughput(dtype: torch.dtype, repeats: int = 200, device: str = "cpu") -> float:
    """GFLOP/s of the fastest of :data:`PRODUCT_SHAPES` in ``dtype`` with the process's torch threads, or on
    ``device`` ``cuda`` (where shapes this small measure kernel launches as much as arithmetic)."""
    best = 0.0
    for rows, inner, columns in PRODUCT_SHAPES:
        left = torch.randn(rows, inner, dtype=dtype, device=device)
        right = torch.randn(inner, columns, dtype=dtype, device=device)
        for _ in range(10):
            left @ right
        synchronize(device)
        start = time.perf_counter()
        for _ in range(repeats):
            left @ right
        synchronize(device)
        best = max(best, 2 * rows * inner * columns * repeats / (time.perf_counter() - start) / 1e9)
    return best


def synchronize(device: str | torch.device) -> None:
    """Waits for a GPU's queued work, so a clock read after it counts that work; nothing on the CPU."""
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)


class MatrixFlops(TorchDispatchMode):
    """Operations of every op torch's FLOP counter knows (matrix products, convolutions, attention),
    summed (``total``), and every tensor op dispatched (``calls``: on a GPU each is a kernel launch or host
    work, which bounds small updates there). ``FlopCounterMode`` itself also tracks modules, which fails on
    TensorDict modules."""

    def __init__(self) -> None:
        super().__init__()
        self.total = 0
        self.calls = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        self.calls += 1
        out = func(*args, **kwargs)
        count = flop_registry.get(func._overloadpacket)
        if count is not None:
            self.total += count(*args, **kwargs, out_val=out)
        return out


class FlopCount(pl.Callback):
    """Counts the operations of the training updates alone: loading a memory-mapped dataset under a
    dispatch mode fails, so the count starts after the datamodule's setup."""

    def __init__(self) -> None:
        self.counter = MatrixFlops()

    def on_train_start(self, trainer: pl.Trainer, module: pl.LightningModule) -> None:
        self.counter.__enter__()

    def on_train_end(self, trainer: pl.Trainer, module: pl.LightningModule) -> None:
        self.counter.__exit__(None, None, None)
