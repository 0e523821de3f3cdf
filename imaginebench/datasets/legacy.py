"""The original benchmark's dataset arrays: episodes padded to one horizon, for code written against its
``env.get_dataset(level)`` (:mod:`imaginebench.benchmark`)."""

from __future__ import annotations

import numpy as np

from imaginebench.datasets.episodes import EpisodeDataset


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
