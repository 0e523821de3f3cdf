"""Whether two datasets hold the same data: the check that a change in how data are made (worker
count, shard size, resuming) changes nothing."""

from __future__ import annotations

from typing import Any

import torch

from imaginebench.datasets.episodes import EpisodeDataset


def dataset_differences(a: EpisodeDataset, b: EpisodeDataset) -> list[str]:
    """The fields in which ``a`` and ``b`` differ (empty: the same data), tensors compared exactly.

    The command line in ``produced_by`` is left out: the same run started another way may write it
    differently."""
    differences = [
        f"steps.{key}"
        for key in sorted(set(a.steps.keys()) | set(b.steps.keys()))
        if key not in a.steps.keys() or key not in b.steps.keys() or not _same(a.steps[key], b.steps[key])
    ]
    if a.instruction_texts != b.instruction_texts:
        differences.append("instruction_texts")
    if not _same(a.instruction_embeddings, b.instruction_embeddings):
        differences.append("instruction_embeddings")
    differences += [
        f"metadata.{key}"
        for key in sorted(set(a.metadata) | set(b.metadata))
        if _without_command(a.metadata).get(key) != _without_command(b.metadata).get(key)
    ]
    return differences


def _same(x: torch.Tensor, y: torch.Tensor) -> bool:
    return x.dtype == y.dtype and x.shape == y.shape and torch.equal(x, y)


def _without_command(metadata: dict[str, Any]) -> dict[str, Any]:
    produced_by = metadata.get("produced_by")
    if isinstance(produced_by, dict):
        return {**metadata, "produced_by": {k: v for k, v in produced_by.items() if k != "command"}}
    return metadata
