"""LoRA switched off at the goal instruction's tokens, so the backbone encodes the goal with its pretrained weights.

Why: a pretrained stack grounded with LoRA reads multi-clause goals early in grounding and loses that reading by the
end (docs/grounding-findings.md, "Which clause the model follows"): the adapter retunes how the goal's own tokens are
encoded to fit the train tasks. With the adapter off at the goal and its label, the generation prompt, which begins
with them, encodes the goal as the pretrained model does (every layer's hidden states there are the pretrained
model's); the slots after it read those states through adapted queries, and everything after the goal (slots,
generated text) is adapted as before.

peft has no per-position adapter mask, so this is written here: a forward hook on each LoRA ``lora_B`` layer scales
its output, the adapter's whole contribution to that projection, by 0 at the flagged positions.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from torch import Tensor, nn


class GoalGate:
    """Holds the positions where the adapter is off for the one forward pass in flight."""

    def __init__(self, model: nn.Module):
        self._keep: Tensor | None = None
        self.layers = [module for name, module in model.named_modules() if name.split(".")[-2:-1] == ["lora_B"]]
        if not self.layers:
            raise ValueError("grounding: pretrained_goal_tokens needs a LoRA backbone (no lora_B layer found)")
        for layer in self.layers:
            layer.register_forward_hook(self._scale)

    def _scale(self, module: nn.Module, inputs: tuple[Tensor, ...], output: Tensor) -> Tensor:
        if self._keep is None:
            return output
        if output.shape[:2] != self._keep.shape[:2]:
            raise RuntimeError(
                f"grounding: goal mask {tuple(self._keep.shape[:2])} does not fit a LoRA output {tuple(output.shape)}"
            )
        return output * self._keep.to(output.dtype)

    @contextmanager
    def off_at(self, goal: Tensor | None) -> Iterator[None]:
        """Within the block, the adapter adds nothing at the positions where ``goal`` ``(B, T)`` is true."""
        if goal is None or not bool(goal.any()):
            yield
            return
        self._keep = (~goal.bool()).unsqueeze(-1)
        try:
            yield
        finally:
            self._keep = None
