"""The original benchmark's ``env.get_dataset(level)``: padded arrays, for code written against it."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from imaginebench.datasets.episodes import DatasetError, EpisodeDataset, load_episodes
from imaginebench.levels import resolve_level


def data_root(data_dir: str | Path | None = None) -> Path:
    return Path(data_dir or os.environ.get("IMAGINEBENCH_DATA", "data"))


def default_dataset_dir(env_id: str, source: str, level: str, data_dir: str | Path | None = None) -> Path:
    """Where ``collect``/``imagine`` put a dataset by default: ``<root>/<env_id>/<source>-<level>``."""
    return data_root(data_dir) / env_id / f"{source}-{resolve_level(level)}"


def to_padded_arrays(dataset: EpisodeDataset) -> dict[str, np.ndarray]:
    """``observations (N,T,S+E)`` (state then instruction embedding), ``actions``, ``rewards (N,T,1)``, ``masks (N,T,1)``."""
    steps = dataset.steps
    episode_id = steps["episode_id"].numpy()
    _, episode_index = np.unique(episode_id, return_inverse=True)
    num_episodes, horizon = int(episode_index.max()) + 1, int(steps["step"].max()) + 1
    embedding = np.asarray(dataset.instruction_embeddings)[steps["instruction_id"].numpy()]
    observation = np.concatenate([steps["state"].numpy(), embedding], axis=1)
    action = steps["action"].numpy()
    t = steps["step"].numpy()
    out = {
        "observations": np.zeros((num_episodes, horizon, observation.shape[1]), np.float32),
        "actions": np.zeros((num_episodes, horizon, *action.shape[1:]), action.dtype),
        "rewards": np.zeros((num_episodes, horizon, 1), np.float32),
        "masks": np.zeros((num_episodes, horizon, 1), np.float32),
    }
    out["observations"][episode_index, t] = observation
    out["actions"][episode_index, t] = action
    out["rewards"][episode_index, t, 0] = steps["reward"].numpy()
    out["masks"][episode_index, t, 0] = 1.0
    return out


def get_dataset(env_id: str, level: str, data_dir: str | Path | None = None):
    """``(real, imaginary)``: real train-level data plus the level's imaginary rollouts (``None`` if absent).

    Reads the default dataset directories; raises with the ``collect`` command to run when the
    real data is missing.
    """
    level = resolve_level(level)
    real_dir = default_dataset_dir(env_id, "real", "train", data_dir)
    if not real_dir.exists():
        raise FileNotFoundError(
            f"{real_dir}: no real data; create it with `imaginebench collect --env {env_id} --level train --out {real_dir}`"
        )
    real = to_padded_arrays(_load_source(real_dir, "real"))
    imaginary_dir = default_dataset_dir(env_id, "imaginary", level, data_dir)
    if level == "train" or not imaginary_dir.exists():
        return real, None
    return real, to_padded_arrays(_load_source(imaginary_dir, "imaginary"))


def _load_source(path: Path, source: str) -> EpisodeDataset:
    dataset = load_episodes(path)
    if dataset.source != source:
        raise DatasetError(f"{path / 'metadata.json'}: field 'source' is {dataset.source!r}, expected {source!r}")
    return dataset
