"""Where a run's real episodes come from: ``data.real`` names directories that must exist, and
``data.real_levels`` the default dataset of each level (:func:`default_dataset_dir`), the only
place collected into on first use, so a misspelled path is an error instead of a new collection."""

from __future__ import annotations

from pathlib import Path

from lightning.pytorch.utilities import rank_zero_info

from imaginebench.collect import collect_default
from imaginebench.datasets import DatasetError, dataset_exists
from imaginebench.datasets.locations import default_dataset_dir
from imaginebench.errors import UserInputError


def real_dataset_paths(env_id: str, real: list[str], real_levels: list[str]) -> list[str]:
    """``real``, then the default dataset of each of ``real_levels`` (logged, so a run says which data it used)."""
    defaults = [str(default_dataset_dir(env_id, "real", level)) for level in real_levels]
    for level, path in zip(real_levels, defaults):
        rank_zero_info(f"data.real_levels: {level} → {path}")
    for path in real:
        if Path(path).resolve() in {Path(default).resolve() for default in defaults}:
            raise UserInputError(f"data.real lists {path}, which data.real_levels {real_levels} loads already")
    return [*real, *defaults]


def prepare_real_data(
    env_id: str, real: list[str], real_levels: list[str], collect_if_missing: int, encoder: str, pooling: str = "mean"
) -> None:
    """Run in ``prepare_data`` (one process): every ``real`` directory must exist before anything is
    collected; a missing default dataset of ``real_levels`` is collected when ``collect_if_missing > 0``
    (a run started meanwhile waits for it, then uses it)."""
    for path in real:
        if not dataset_exists(path):
            raise DatasetError(
                f"data.real: {path} is neither a dataset directory nor a local Minari dataset id (only the default datasets of data.real_levels are collected on first use)"
            )
    for level in real_levels:
        path = default_dataset_dir(env_id, "real", level)
        if path.exists():
            continue
        if collect_if_missing < 1:
            raise DatasetError(
                f"data.real_levels: {path} does not exist; set data.collect_if_missing to collect it, or run "
                f"imaginebench collect --env {env_id} --level {level} --episodes N --out {path}"
            )
        collect_default(env_id, level, collect_if_missing, encoder, pooling)
