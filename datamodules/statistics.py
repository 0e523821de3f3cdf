"""State statistics for standardising inputs (offline RL algorithms and the grounding model)."""

from __future__ import annotations

import torch


def mean_and_std(states: torch.Tensor, min_std: float = 1e-3) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-dimension mean and standard deviation (at least ``min_std``, so constant dimensions stay finite)."""
    states = states.double()
    return states.mean(0).float(), states.std(0).clamp_min(min_std).float()
