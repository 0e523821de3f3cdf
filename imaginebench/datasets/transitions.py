"""Flat (s, a, r, s') transitions in the key layout TorchRL losses expect."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from tensordict import TensorDict
from torch.nn import functional

from imaginebench.datasets.episodes import EpisodeDataset


@dataclass(frozen=True)
class Transitions:
    """Transition rows whose instruction is an index into one table of embeddings.

    A row stores ``instruction_id``, not the embedding: copying the 384-d embedding into every row
    (twice, for ``next``) made MetaWorld's 118k rows take 360 MB and every batch a 1 MB random
    gather. :func:`with_instruction_embeddings` looks them up for the rows a batch drew.
    """

    rows: TensorDict
    instruction_embeddings: torch.Tensor

    def __len__(self) -> int:
        return self.rows.shape[0]


def with_instruction_embeddings(rows: TensorDict, instruction_embeddings: torch.Tensor) -> TensorDict:
    """``rows`` (of :attr:`Transitions.rows`) without ``instruction_id``, with ``instruction_embedding``
    and ``next.instruction_embedding`` (one tensor: the instruction holds for the whole episode). The lookup is
    ``F.embedding`` (a row copy per id), not ``instruction_embeddings[ids]``, whose ``aten::index`` on a CPU
    copies element by element."""
    embedding = functional.embedding(rows["instruction_id"], instruction_embeddings)
    rows = rows.exclude("instruction_id")
    rows["instruction_embedding"] = embedding
    rows["next", "instruction_embedding"] = embedding
    return rows


def to_transitions(dataset: EpisodeDataset) -> Transitions:
    """One row per step: ``state``, ``instruction_id``, ``action``, ``task_id`` and a ``next`` sub-dict.

    ``next.done`` marks episode ends (terminated or truncated); only ``next.terminated`` stops
    bootstrapping in TD targets, so time-limit truncation is not treated as a terminal state.
    """
    steps = dataset.steps
    terminated = steps["terminated"].clone().unsqueeze(-1)
    truncated = steps["truncated"].clone().unsqueeze(-1)
    rows = TensorDict(
        {
            "state": steps["state"].clone(),
            "instruction_id": steps["instruction_id"].clone(),
            "action": steps["action"].clone(),
            "task_id": steps["task_id"].clone(),
            "next": {
                "state": steps["next_state"].clone(),
                "reward": steps["reward"].clone().unsqueeze(-1),
                "terminated": terminated,
                "truncated": truncated,
                "done": terminated | truncated,
            },
        },
        batch_size=steps.batch_size,
    )
    return Transitions(rows, torch.as_tensor(dataset.instruction_embeddings).float())
