"""d3rlpy (the original benchmark's training path): the arrays ``d3rlpy.dataset.MDPDataset`` takes.

d3rlpy 2.8 pins gymnasium 1.0 and imports the old ``gym``, so it cannot share this project's
environment; the export needs no d3rlpy: ``mdp_dataset.npz`` holds exactly the keyword arguments
(``MDPDataset(**np.load(file))``) and ``metadata.json`` the rest. Observations are the state followed
by the instruction embedding (as in the original ``get_dataset``); an episode ends at ``terminals``
(terminated) or ``timeouts`` (any other end). d3rlpy takes each next observation from the following
row, so a timed-out episode's last step, which has none, gives no transition there (as in D4RL).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from imaginebench.datasets.episodes import EpisodeDataset
from imaginebench.datasets.interop.flat import (
    episode_bounds,
    export_metadata,
    refuse_existing,
    require_chained,
    row_embeddings,
)
from imaginebench.storage import atomic_directory

ARRAYS_FILE, METADATA_FILE = "mdp_dataset.npz", "metadata.json"


def mdp_arrays(dataset: EpisodeDataset) -> dict[str, np.ndarray]:
    """``observations (N, S+E)``, ``actions``, ``rewards``, ``terminals``, ``timeouts`` (float32 flags)."""
    require_chained(dataset, "d3rlpy")
    steps = dataset.steps
    last = np.zeros(dataset.num_steps, dtype=bool)
    last[episode_bounds(dataset)[:, 1] - 1] = True
    terminated = steps["terminated"].numpy()
    return {
        "observations": np.concatenate([steps["state"].numpy(), row_embeddings(dataset)], axis=1),
        "actions": steps["action"].numpy(),
        "rewards": steps["reward"].numpy(),
        "terminals": terminated.astype(np.float32),
        "timeouts": (last & ~terminated).astype(np.float32),
    }


def export_d3rlpy(dataset: EpisodeDataset, out: str | Path, overwrite: bool = False) -> Path:
    out = Path(out)
    refuse_existing(out, overwrite, "d3rlpy")
    arrays = mdp_arrays(dataset)
    state_dim = int(dataset.metadata["state_dim"])
    layout = {"state": [0, state_dim], "instruction_embedding": [state_dim, arrays["observations"].shape[1]]}
    with atomic_directory(out) as tmp:
        np.savez_compressed(tmp / ARRAYS_FILE, **arrays)  # 31 MB instead of 237 MB for BabyAI real-train
        (tmp / METADATA_FILE).write_text(
            json.dumps(export_metadata(dataset, "d3rlpy", arrays=ARRAYS_FILE, observation_columns=layout), indent=2)
        )
    return out


def load_mdp_dataset(path: str | Path):
    """d3rlpy's ``MDPDataset`` of an export; needs d3rlpy, in an environment of its own (see the module docstring)."""
    from d3rlpy.dataset import MDPDataset

    with np.load(Path(path) / ARRAYS_FILE) as arrays:
        return MDPDataset(**arrays)
