"""Continuous states predicted as a classified change per dimension (CLEVR-Robot's ball positions).

A regressed change averages the outcomes a model is unsure between: a pushed ball that may or may
not hit another comes out half-way, overlapping it, and a ball that should stay put creeps. Most
of a push's effect is one of a few displacements (a free push moves its ball 0.147 along an axis,
0.117 per axis diagonally; other balls keep their place exactly), so each dimension's change is
classified into bins of a fixed width instead: the argmax is one outcome, never a blend, and the
zero bin keeps a value exactly. docs/grounding.md has the measurements behind the choice.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

STILL_PRIOR = 0.8
"""Initial probability of the zero bin: on CLEVR-Robot 77 % of a step's dimensions do not change,
and Adam moves a bias only ~lr per update, so starting there saves the first few hundred."""


class BinnedChangeHead(nn.Module):
    """Logits over ``2K + 1`` change bins per dimension, bin ``k`` meaning a change of
    ``(k - K) · bin_width``; changes beyond ``K · bin_width`` fall in the outermost bins."""

    def __init__(self, width: int, state_dim: int, bin_width: float, max_change: float):
        super().__init__()
        if bin_width <= 0 or max_change < bin_width:
            raise ValueError(
                f"grounding: state_change_bin_width must be > 0 and <= max_state_change, got {bin_width} and {max_change}"
            )
        self.bin_width = bin_width
        self.half = math.ceil(max_change / bin_width - 1e-9)
        bins = 2 * self.half + 1
        self.logits = nn.Linear(width, state_dim * bins)
        with torch.no_grad():
            self.logits.bias.view(state_dim, bins)[:, self.half] = math.log(
                STILL_PRIOR / (1 - STILL_PRIOR) * (bins - 1)
            )

    @property
    def bins(self) -> int:
        return 2 * self.half + 1

    def forward(self, hidden: Tensor) -> Tensor:
        """``(..., width)`` → ``(..., state_dim, bins)``."""
        return self.logits(hidden).unflatten(-1, (-1, self.bins))

    def target_bins(self, change: Tensor) -> Tensor:
        """The bin of each observed change (nearest bin centre, clipped to the range)."""
        return (change / self.bin_width).round().long().clamp(-self.half, self.half) + self.half

    def changes(self, logits: Tensor) -> Tensor:
        """The change of each dimension's most likely bin."""
        return (logits.argmax(-1) - self.half).to(torch.float32) * self.bin_width
