"""State statistics for standardising inputs (offline RL algorithms and the grounding model)."""

from __future__ import annotations

import torch


def mean_and_std(states: torch.Tensor, min_std: float = 1e-3) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-dimension mean and standard deviation (at least ``min_std``, so constant dimensions stay finite)."""
    states = states.double()
    return states.mean(0).float(), states.std(0).clamp_min(min_std).float()


def change_scale(changes: torch.Tensor, tolerance: float = 0.0, min_scale: float = 1e-4) -> torch.Tensor:
    """Per-dimension root mean square of the changes larger than ``tolerance`` (at least ``min_scale``; a
    dimension that never moves gets ``min_scale``): the typical size of a step's change where one happens."""
    changes = changes.double()
    moved = changes.abs() > tolerance
    mean_square = (changes.square() * moved).sum(0) / moved.sum(0).clamp_min(1)
    return mean_square.sqrt().clamp_min(min_scale).float()
