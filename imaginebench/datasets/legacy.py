"""The original benchmark's ``env.get_dataset(level)``: padded arrays, for code written against it."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from imaginebench.datasets.episodes import EpisodeDataset, check_metadata, load_episodes
from imaginebench.datasets.locations import default_dataset_dir
from imaginebench.levels import resolve_level


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


def get_dataset(env_id: str, level: str, encoder_id: str, data_dir: str | Path | None = None):
    """``(real, imaginary)``: real train-level data plus the level's imaginary rollouts (``None`` for
    the train level or when there are none).

    The real data are ``<root>/<env_id>/real-train``, collected there on first use when that is
    the default location (:func:`collect_default_real`). The imaginary data are the data root's
    own rollouts if any, else ones shipped in ``assets/``, else imagined once into the data root
    from the env's shipped grounded model (:func:`~imaginebench.shipped.find_or_imagine`). Both
    must have been made for this env, level and instruction encoder: mixing another's rows would
    silently train on wrong embeddings or states.
    """
    from imaginebench.shipped import find_or_imagine  # above this package: it runs the grounded model

    level = resolve_level(level)
    real_dir = default_dataset_dir(env_id, "real", "train", data_dir)
    if not real_dir.exists():
        collect_default_real(env_id, encoder_id, real_dir)
    real = to_padded_arrays(_load_checked(real_dir, env_id, "train", "real", encoder_id))
    imaginary_dir = None if level == "train" else find_or_imagine(env_id, level, data_dir)
    if imaginary_dir is None:
        return real, None
    return real, to_padded_arrays(_load_checked(imaginary_dir, env_id, level, "imaginary", encoder_id))


def collect_default_real(env_id: str, encoder_id: str, real_dir: Path) -> None:
    """Collect the env's default number of expert episodes into ``real_dir``, the default real
    dataset; any other missing directory is an error naming it (a typo must not start a long collection)."""
    from imaginebench.collect import collect_default
    from imaginebench.instructions.encoder import encoder_arguments
    from imaginebench.registry import get_domain

    default = default_dataset_dir(env_id, "real", "train")
    if real_dir.resolve() != default.resolve():
        raise FileNotFoundError(
            f"{real_dir}: no real data (only the default {default} is collected on first use); "
            f"create it with `imaginebench collect --env {env_id} --level train --episodes N --out {real_dir}`"
        )
    model, pooling = encoder_arguments(encoder_id)
    collect_default(env_id, "train", get_domain(env_id).real_episodes, model, pooling)  # into real_dir


def _load_checked(path: Path, env_id: str, level: str, source: str, encoder_id: str) -> EpisodeDataset:
    from imaginebench.registry import get_domain

    dataset = load_episodes(path)
    expected = {
        "env_id": env_id,
        "level": level,
        "source": source,
        "encoder_id": encoder_id,
        "state_dim": get_domain(env_id).state_dim,
    }
    check_metadata(dataset, expected, f"get_dataset of {env_id} level {level!r}")
    return dataset
