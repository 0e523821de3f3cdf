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


def product_throughput(dtype: torch.dtype, repeats: int = 200) -> float:
    """GFLOP/s of the fastest of :data:`PRODUCT_SHAPES` in ``dtype`` with the process's torch threads."""
    best = 0.0
    for rows, inner, columns in PRODUCT_SHAPES:
        left, right = torch.randn(rows, inner, dtype=dtype), torch.randn(inner, columns, dtype=dtype)
        for _ in range(10):
            left @ right
        start = time.perf_counter()
        for _ in range(repeats):
            left @ right
        best = max(best, 2 * rows * inner * columns * repeats / (time.perf_counter() - start) / 1e9)
    return best


class MatrixFlops(TorchDispatchMode):
    """Operations of every op torch's FLOP counter knows (matrix products, convolutions, attention),
    summed. ``FlopCounterMode`` itself also tracks modules, which fails on TensorDict modules."""

    def __init__(self) -> None:
        super().__init__()
        self.total = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
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
