"""Warnings every run printed that were read and need no action."""

from __future__ import annotations

import warnings

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
