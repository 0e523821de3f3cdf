"""Where a dataset of an env and level lives by default: the data root, then the shipped assets.

Datasets go under the data root (``$IMAGINEBENCH_DATA``, default ``data``) as
``<env_id>/<source>-<level>``; ``assets/`` may ship imaginary ones in the same layout. A dataset
under the data root wins, so a user's own ``imagine`` run replaces a shipped one without touching
any config. This module only looks; :mod:`imaginebench.shipped` imagines a level's data from the
env's shipped grounded model when neither place has them.
"""

from __future__ import annotations

import os
from pathlib import Path

from imaginebench.assets import assets_dir
from imaginebench.levels import resolve_level


def data_root(data_dir: str | Path | None = None) -> Path:
    return Path(data_dir or os.environ.get("IMAGINEBENCH_DATA", "data"))


def default_dataset_dir(env_id: str, source: str, level: str, data_dir: str | Path | None = None) -> Path:
    """Where ``collect``/``imagine`` put a dataset by default: ``<root>/<env_id>/<source>-<level>``."""
    return data_root(data_dir) / env_id / f"{source}-{resolve_level(level)}"


def imaginary_candidates(env_id: str, level: str, data_dir: str | Path | None = None) -> tuple[Path, Path]:
    """The places looked at for a level's imaginary rollouts, first match wins: data root, then assets."""
    return default_dataset_dir(env_id, "imaginary", level, data_dir), default_dataset_dir(
        env_id, "imaginary", level, assets_dir()
    )


def find_imaginary_dataset(env_id: str, level: str, data_dir: str | Path | None = None) -> Path | None:
    """The imaginary dataset of ``env_id`` at ``level``, or ``None`` when neither place has one."""
    return next((path for path in imaginary_candidates(env_id, level, data_dir) if path.exists()), None)
