"""A checkpoint path from the user, checked before Lightning reads it: Lightning's own errors for a
file that is not a checkpoint are ``KeyError: 101`` or ``KeyError: 'pytorch-lightning_version'``."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import torch

from imaginebench.errors import UserInputError

LIGHTNING_CKPT_KEYWORDS = ("best", "last", "hpc")
"""``--ckpt_path`` values that Lightning resolves itself (as it does ``registry…`` and remote URLs)."""


def last_checkpoint(run_dir: Path) -> Path:
    """Where ``ModelCheckpoint(save_last=True)`` keeps a run's newest checkpoint: what ``--ckpt_path last`` resumes.

    Usually ``checkpoints/last.ckpt``. A run resumed after its directory was moved or copied writes ``last-v1.ckpt``
    beside it (the checkpoint names its old folder as its last one, so Lightning will not overwrite the file), and
    ``last.ckpt`` then holds the older state: the newest ``last*.ckpt`` counts, as Lightning's own ``"last"`` reads
    it. ``checkpoints/last.ckpt`` when there is none."""
    folder = Path(run_dir) / "checkpoints"
    candidates = [path for path in folder.glob("last*.ckpt") if path.is_file()]
    return max(candidates, key=lambda path: path.stat().st_mtime_ns) if candidates else folder / "last.ckpt"


def read_lightning_checkpoint(path: str | Path | None, option: str) -> dict[str, Any] | None:
    """The local Lightning checkpoint ``path`` (its tensors memory-mapped, not read), or a
    :class:`UserInputError` naming ``option``; ``None`` for what Lightning resolves itself."""
    if path is None or str(path) in LIGHTNING_CKPT_KEYWORDS or str(path).startswith("registry") or "://" in str(path):
        return None
    if not Path(path).is_file():
        raise UserInputError(f"{option} {path}: no such file")
    if not zipfile.is_zipfile(path):
        raise UserInputError(
            f"{option} {path}: not a checkpoint (torch.save writes a zip archive; this file is not one)"
        )
    try:  # as Lightning reads it; mmap: the tensors are not read
        checkpoint = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
    except Exception as error:  # torch.load raises many types for a file that is not a checkpoint
        lines = [line.strip() for line in str(error).strip().splitlines()] or [type(error).__name__]
        reason = next((line for line in lines if line.startswith("WeightsUnpickler error")), lines[0]).split(". ")[0]
        raise UserInputError(f"{option} {path}: not a checkpoint torch can read ({reason})") from error
    if not isinstance(checkpoint, dict) or not {"state_dict", "pytorch-lightning_version"} <= checkpoint.keys():
        raise UserInputError(
            f"{option} {path}: a torch file but not a Lightning checkpoint (no 'state_dict' and 'pytorch-lightning_version')"
        )
    return checkpoint


def check_module_class(checkpoint: dict[str, Any], path: str | Path, expected: str, required: bool) -> None:
    """Refuse a checkpoint written by another module class: LightningCLI would silently train that class.
    ``required``: it must name its class (``imaginebench fit`` checkpoints do, as ``_class_path`` in their
    hyperparameters)."""
    written_by = checkpoint.get("hyper_parameters", {}).get("_class_path")
    if written_by is None and required:
        raise UserInputError(
            f"--ckpt_path {path} names no module class (not written by imaginebench fit); this config trains {expected}"
        )
    if written_by is not None and written_by != expected:
        raise UserInputError(f"--ckpt_path {path} was written by {written_by}; this config trains {expected}")
