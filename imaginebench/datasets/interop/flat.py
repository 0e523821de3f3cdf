"""Flat numpy views of an episode dataset, shared by the exporters and importers of every format."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch
from tensordict import TensorDict

from imaginebench.datasets.episodes import (
    SCHEMA_VERSION,
    DatasetError,
    EpisodeDataset,
    check_end_flags,
    episode_row_ranges,
    validate_episodes,
)
from imaginebench.errors import UserInputError
from imaginebench.storage import read_json

STEP_FIELDS = (
    "episode_id",
    "step",
    "state",
    "action",
    "reward",
    "next_state",
    "terminated",
    "truncated",
    "success",
    "task_id",
    "instruction_id",
)
"""Every per-step field of the episode format, in the order flat exports list them."""


def refuse_existing(out: Path, overwrite: bool, format_name: str | None = None) -> None:
    """An existing ``out`` is replaced only with ``overwrite``, and, for the directory formats
    (``format_name``), only if it is an earlier export in that format: never a project folder."""
    if not out.exists():
        return
    if not overwrite:
        raise UserInputError(f"{out} already exists (pass --overwrite to replace it)")
    if format_name is not None and read_json(out / "metadata.json", "export", "format") != format_name:
        raise UserInputError(
            f"--out {out} is not a {format_name} export of imaginebench (no metadata.json naming it); refusing to replace it"
        )


def episode_bounds(dataset: EpisodeDataset) -> np.ndarray:
    """``(episodes, 2)``: first row and end row of every episode."""
    return np.asarray(episode_row_ranges(dataset.steps), dtype=np.int64).reshape(-1, 2)


def row_embeddings(dataset: EpisodeDataset) -> np.ndarray:
    """``(N, E)``: each row's instruction embedding, looked up in the instruction table."""
    return np.asarray(dataset.instruction_embeddings)[dataset.steps["instruction_id"].numpy()]


def require_chained(dataset: EpisodeDataset, format_name: str) -> None:
    """Formats that store one observation sequence per episode (Minari, d3rlpy) hold ``next_state[t]``
    only as ``state[t+1]``, one instruction and task per episode, and a done flag only at an episode's end
    (the episode format's own rule: :func:`check_end_flags`)."""
    steps = dataset.steps
    check_end_flags(steps, dataset.path or "dataset")
    episode_id = steps["episode_id"]
    same = episode_id[1:] == episode_id[:-1]
    where = f"{dataset.path or 'dataset'}: field"
    if not (steps["next_state"][:-1] == steps["state"][1:]).all(-1)[same].all():
        raise DatasetError(
            f"{where} 'next_state' differs from the next row's state inside an episode; {format_name} cannot store that"
        )
    for name in ("instruction_id", "task_id"):
        if not (steps[name][1:] == steps[name][:-1])[same].all():
            raise DatasetError(f"{where} {name!r} changes inside an episode; {format_name} stores one per episode")


def export_metadata(dataset: EpisodeDataset, format_name: str, **layout: Any) -> dict[str, Any]:
    """The dataset's metadata (env, level, source, encoder, tasks, generator, produced_by) plus how
    this export lays the fields out, so a reader of the exported files needs nothing else."""
    return {
        **dataset.metadata,
        "schema_version": SCHEMA_VERSION,
        "counts": dataset.counts(),
        "export": {"format": format_name, **layout},
    }


def dataset_from_columns(
    columns: dict[str, np.ndarray], texts: list[str], embeddings: np.ndarray, metadata: dict[str, Any], path: Path
) -> EpisodeDataset:
    """An :class:`EpisodeDataset` from per-step numpy ``columns`` (the fields of
    :mod:`imaginebench.datasets.episodes`), validated like a dataset loaded from disk."""
    steps = TensorDict(
        {name: torch.as_tensor(np.array(value)) for name, value in columns.items()}, batch_size=[len(columns["reward"])]
    )
    metadata = {key: value for key, value in metadata.items() if key != "export"}
    dataset = EpisodeDataset(
        steps, list(texts), torch.as_tensor(np.array(embeddings, dtype=np.float32)), metadata, path
    )
    dataset.metadata["counts"] = dataset.counts()
    validate_episodes(dataset)
    return dataset
