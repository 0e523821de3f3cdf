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


FLOAT32_ROWS = 1024
"""Rows cast to float32 at a time in :func:`float32_output` (1 MB at width 256): the cast stays in cache for its
product instead of a whole float32 copy going through memory (10,752 rows: 0.69 against 1.16 ms, alone)."""


class _Float32Product(torch.autograd.Function):
    """``bias + hidden @ weight`` computed in float32 from a lower-precision ``hidden``, with the gradients to
    ``hidden`` and ``weight`` computed in ``hidden``'s dtype, as autocast computes a layer's gradients. Written by
    hand because autograd, through ``hidden.float()``, forms the gradient to ``hidden`` in float32 as a matrix
    product and casts it down: with one output column, a product over an inner dimension of 1 (COMBO's 10,752
    scored rows: 3.7 ms per critic per update, with the cast 5.6 ms), where one elementwise product in bfloat16
    does; and it keeps a float32 copy of ``hidden`` for the weight's gradient."""

    @staticmethod
    def forward(ctx, hidden: Tensor, weight: Tensor, bias: Tensor) -> Tensor:
        ctx.save_for_backward(hidden, weight)
        parts = hidden.split(FLOAT32_ROWS, dim=-2)
        return torch.cat([_affine(bias, part.to(weight.dtype), weight) for part in parts], dim=-2)

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
        hidden, weight = ctx.saved_tensors
        low_grad = grad.to(hidden.dtype)
        grad_hidden = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            low_weight = weight.transpose(-1, -2).to(hidden.dtype)
            grad_hidden = low_grad * low_weight if weight.shape[-1] == 1 else low_grad @ low_weight
        if ctx.needs_input_grad[1]:
            grad_weight = (hidden.transpose(-1, -2) @ low_grad).to(weight.dtype)
        if ctx.needs_input_grad[2]:
            grad_bias = grad.sum(-2, keepdim=True)
        return grad_hidden, grad_weight, grad_bias


def float32_output(hidden: Tensor, weight: Tensor, bias: Tensor) -> Tensor:
    """``bias + hidden @ weight`` in ``weight``'s dtype (float32) for a 2-D or batched 3-D ``hidden``, outside
    autocast, whatever ``hidden``'s dtype; ``bias`` is ``(1, out)`` or ``(members, 1, out)``."""
    with torch.autocast(hidden.device.type, enabled=False):
        if hidden.dtype == weight.dtype:
            return _affine(bias, hidden, weight)
        return _Float32Product.apply(hidden, weight, bias)


def _affine(bias: Tensor, hidden: Tensor, weight: Tensor) -> Tensor:
    """``bias + hidden @ weight`` for a 2-D or batched 3-D ``hidden``, in their dtype."""
    return torch.baddbmm(bias, hidden, weight) if hidden.dim() == 3 else torch.addmm(bias, hidden, weight)
