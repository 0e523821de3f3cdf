"""An output layer that stays in float32 when the rest of a network runs in bfloat16.

Under ``trainer.precision: bf16-mixed`` every matrix product runs in bfloat16, whose 8-bit mantissa
resolves a Q-value of 500 only to ±2: TD errors smaller than that would vanish in rounding. The
hidden layers carry nearly all the arithmetic, so only the last layer, which writes Q-values, action
means and logits, is kept in float32 (its input is cast up, its product stays in float32).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn
from torch.nn import functional


class FullPrecisionLinear(nn.Linear):
    """``nn.Linear`` that computes in its weight's dtype even inside ``torch.autocast``; the same
    parameters and state dict as the layer it replaces."""

    @classmethod
    def replacing(cls, linear: nn.Linear) -> FullPrecisionLinear:
        layer = cls(linear.in_features, linear.out_features, bias=linear.bias is not None, device="meta")
        layer.weight = linear.weight
        layer.bias = linear.bias
        return layer

    def forward(self, input: Tensor) -> Tensor:
        if not torch.is_autocast_enabled(input.device.type):
            return functional.linear(input, self.weight, self.bias)
        with torch.autocast(input.device.type, enabled=False):
            return functional.linear(input.to(self.weight.dtype), self.weight, self.bias)
