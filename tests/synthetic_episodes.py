"""Small BabyAI-shaped episode datasets whose rows tell where they came from (shared by the tests).

``state[:, 0]`` is the source (0 real, 1 imaginary) and ``state[:, 1]`` the row's index in its
dataset, so a test can trace every sampled row back to its origin.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import torch
from tensordict import TensorDict

from imaginebench.datasets import EpisodeDataset, write_episodes
from imaginebench.instructions import InstructionEncoder
from imaginebench.registry import get_domain

ENV_ID = "BabyAI-v0"
STATE_DIM = get_domain(ENV_ID).state_dim
EMBEDDING_DIM = 384
NUM_ACTIONS = 7
TASKS = {"real": ["goto", "pickup"], "imaginary": ["pickup", "open_door"]}
"""The imaginary data has one task of its own, as in ImagineBench."""


def synthetic_dataset(
    source: str = "real",
    lengths: Sequence[int] = (5,) * 20,
    *,
    state_dim: int = STATE_DIM,
    embedding_dim: int = EMBEDDING_DIM,
    seed: int | None = None,
    **metadata,
) -> EpisodeDataset:
    """Episodes of the given ``lengths``; ``metadata`` overrides fields (e.g. ``env_id``)."""
    lengths_t = torch.tensor(list(lengths))
    n = int(lengths_t.sum())
    gen = torch.Generator().manual_seed(len(source) * 1000 + n if seed is None else seed)
    episode_id = torch.arange(len(lengths_t)).repeat_interleave(lengths_t)
    step = torch.cat([torch.arange(length) for length in lengths])
    state = torch.randn(n, state_dim, generator=gen)
    state[:, 0] = float(source == "imaginary")
    state[:, 1] = torch.arange(n, dtype=torch.float32)
    last = torch.zeros(n, dtype=torch.bool)
    last[lengths_t.cumsum(0) - 1] = True
    steps = TensorDict(
        {
            "state": state,
            "next_state": state + 1,
            "action": torch.randint(0, NUM_ACTIONS, (n,), generator=gen),
            "reward": last.float(),
            "terminated": last.clone(),
            "truncated": torch.zeros(n, dtype=torch.bool),
            "success": last.clone(),
            "episode_id": episode_id,
            "step": step,
            "task_id": episode_id % 2,
            "instruction_id": episode_id % 3,
        },
        batch_size=[n],
    )
    tasks = TASKS[source]
    texts = [f"{source} instruction {i}" for i in range(3)]
    return EpisodeDataset(
        steps,
        texts,
        torch.randn(3, embedding_dim, generator=gen),
        {
            "env_id": ENV_ID,
            "level": "train",
            "source": source,
            "encoder_id": InstructionEncoder().encoder_id,
            "embedding_dim": embedding_dim,
            "state_dim": state_dim,
            "action_kind": "discrete",
            "num_actions": NUM_ACTIONS,
            "tasks": tasks,
            "produced_by": {},
            "counts": {},
            **metadata,
        },
    )


def write_synthetic(path: Path, source: str, num_episodes: int = 20, **metadata) -> str:
    return str(write_episodes(synthetic_dataset(source, (5,) * num_episodes, **metadata), path))
