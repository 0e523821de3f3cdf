"""Grid states (whole numbers in [0, K) per dimension) in and out of a language model.

Regressing a grid state and rounding it is almost never exactly right, and classifying only each
dimension's change cannot express a jump to a fixed value (an object picked up). These read a
value as a symbol and predict the next one by value and by change; docs/grounding.md has the
measurements behind the choice.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn
from torch.nn.functional import one_hot


class WholeNumberStateEmbedding(nn.Module):
    """A whole-number state vector as the sum of one embedding per (dimension, value): the model
    reads each value as a symbol, as it reads a word, instead of as a magnitude."""

    def __init__(self, state_dim: int, values: int, width: int):
        super().__init__()
        self.values = values
        self.table = nn.Embedding(state_dim * values, width)
        nn.init.normal_(self.table.weight, std=0.02)
        self.register_buffer("offsets", torch.arange(state_dim) * values, persistent=False)

    def forward(self, states: Tensor) -> Tensor:
        indices = states.round().long().clamp(0, self.values - 1) + self.offsets
        return self.table(indices).sum(-2)


class WholeNumberStateHead(nn.Module):
    """Logits of each dimension's next value as the sum of a value logit and a change logit (the
    change from the value it has now). A move by +1 is one change class wherever the agent is, a
    picked-up object goes to one value wherever it was: either kind of step is easy to express.

    With ``copies``, a third term lets a dimension take the value another dimension has now (a pointer,
    as in copy networks): one logit per (dimension, source dimension) pair, added to the source's current
    value. A drop puts the object on the agent's cell and a pick-up copies the object's colour into the
    hand: with value and change logits alone the hidden state must spell the agent's cell out as a class,
    and BabyAI's imagined drops landed on it in only 13 % of cases (docs/grounding-findings.md)."""

    def __init__(self, width: int, state_dim: int, values: int, copies: bool = False):
        super().__init__()
        self.values = values
        self.value_logits = nn.Linear(width, state_dim * values)
        self.change_logits = nn.Linear(width, state_dim * (2 * values - 1))
        self.copy_logits = nn.Linear(width, state_dim * state_dim) if copies else None
        with torch.no_grad():
            # Copying starts at probability 0.9: a dimension keeps its value on most steps
            # (on BabyAI more than 9 in 10), and Adam moves a bias only ~lr per update.
            self.change_logits.bias.view(state_dim, -1)[:, values - 1] = math.log(9.0 * (values - 1))
            if self.copy_logits is not None:  # starts adding nothing, so the head begins as without it
                self.copy_logits.weight.zero_()
                self.copy_logits.bias.zero_()

    def forward(self, hidden: Tensor, reference: Tensor) -> Tensor:
        values = self.values
        current = reference.round().long().clamp(0, values - 1).unsqueeze(-1)
        change_index = (
            torch.arange(values, device=hidden.device) - current + values - 1
        )  # next value v ↔ change v - current
        change = self.change_logits(hidden).unflatten(-1, (-1, 2 * values - 1)).gather(-1, change_index)
        logits = self.value_logits(hidden).unflatten(-1, (-1, values)) + change
        if self.copy_logits is not None:
            sources = one_hot(current.squeeze(-1), values).to(logits.dtype)  # (..., source, value)
            pointers = self.copy_logits(hidden).unflatten(-1, (-1, sources.shape[-2]))  # (..., dimension, source)
            logits = logits + pointers @ sources
        return logits
