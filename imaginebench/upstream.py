"""Workarounds for behaviour of upstream libraries, in one place; each is pinned by a test that
fails when the upstream behaviour it works around changes (the warnings: ``tests/test_lightning_cli.py``)."""

from __future__ import annotations

import importlib
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tensordict import TensorDict
from torchrl.objectives.value import TD0Estimator

_memmap_patch = threading.Lock()
_memmap_module = importlib.import_module("tensordict.memmap")  # ``tensordict.memmap`` is also a function


def load_memmap_copy_on_write(prefix: str | Path) -> TensorDict:
    """``TensorDict.load_memmap`` with every file mapped privately (copy-on-write).

    tensordict 0.14 maps a file *shared* whenever the process may write it, so an in-place op on a
    loaded tensor writes through to the file and a truncated file is silently zero-extended to its
    recorded size (``torch.from_file(shared=True)``). Mapped privately, writes stay in memory and a
    short file is an error. Pinned by ``tests/datasets/test_episodes.py`` (writes and truncation).
    """
    with _memmap_patch, _files_look_read_only():
        return TensorDict.load_memmap(prefix)


@contextmanager
def _files_look_read_only() -> Iterator[None]:
    original = _memmap_module._is_writable
    _memmap_module._is_writable = lambda file_path: False
    try:
        yield
    finally:
        _memmap_module._is_writable = original


KNOWN_HARMLESS_WARNINGS: tuple[tuple[str, str], ...] = (
    (r"`isinstance\(treespec, LeafSpec\)` is deprecated", "Lightning 2.6.6's own call into torch 2.13's pytree"),
    (
        r"Your `IterableDataset` has `__len__` defined",
        "datamodules' EpochBatches run in one process (num_workers=0), so the length they give is exact",
    ),
    (
        r"You have overridden `on_(after|before)_batch_transfer` in `LightningModule` but have passed in a `LightningDataModule`",
        "the module's hook is the one meant: it normalises with the module's state statistics, or tokenises with its backbone",
    ),
    (r"`is_gradient_checkpointing` is deprecated", "peft 0.21's own call into transformers 5.23"),
)
"""(message pattern, why it is harmless) of warnings every run printed; each was read and needs no action."""


def silence_known_harmless_warnings() -> None:
    """Hide :data:`KNOWN_HARMLESS_WARNINGS`, so a run's output shows its progress and results; any other
    warning still shows."""
    for message, _why in KNOWN_HARMLESS_WARNINGS:
        warnings.filterwarnings("ignore", message=message)


class TargetNetworkTD0(TD0Estimator):
    """``r + γ (1 − terminated) max_a Q_target(s', a)``, from the target network.

    TorchRL 0.14.1's ``DiscreteCQLLoss`` passes the target parameters as ``params=``, which
    ``TD0Estimator.value_estimate`` silently ignores (it takes ``target_params=``), so its own
    estimator bootstraps from the online network; this one uses them.
    """

    def value_estimate(self, tensordict, target_params=None, next_value=None, params=None, **kwargs):
        target_params = params if target_params is None else target_params
        return super().value_estimate(tensordict, target_params=target_params, next_value=next_value, **kwargs)


def lightning_logs_this_step(trainer) -> bool:
    """Whether ``LightningModule.log(on_step=True)`` is written at this step: Lightning keeps the test
    private (``trainer._logger_connector.should_update_logs``); pinned by ``tests/test_upstream.py``."""
    return trainer._logger_connector.should_update_logs
