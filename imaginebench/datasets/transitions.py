"""Flat (s, a, r, s') transitions in the key layout TorchRL losses expect."""

from __future__ import annotations

import torch
from tensordict import TensorDict

from imaginebench.datasets.episodes import EpisodeDataset


def to_transitions(dataset: EpisodeDataset) -> TensorDict:
    """One row per step: ``state``, ``instruction_embedding``, ``action`` and a ``next`` sub-dict.

    ``next.done`` marks episode ends (terminated or truncated); only ``next.terminated`` stops
    bootstrapping in TD targets, so time-limit truncation is not treated as a terminal state.
    """
    steps = dataset.steps
    embedding = torch.as_tensor(dataset.instruction_embeddings)[steps["instruction_id"]]
    terminated = steps["terminated"].clone().unsqueeze(-1)
    truncated = steps["truncated"].clone().unsqueeze(-1)
    return TensorDict(
        {
            "state": steps["state"].clone(),
            "instruction_embedding": embedding,
            "action": steps["action"].clone(),
            "task_id": steps["task_id"].clone(),
            "next": {
                "state": steps["next_state"].clone(),
                "instruction_embedding": embedding.clone(),
                "reward": steps["reward"].clone().unsqueeze(-1),
                "terminated": terminated,
                "truncated": truncated,
                "done": terminated | truncated,
            },
        },
        batch_size=steps.batch_size,
    )
