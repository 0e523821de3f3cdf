"""CLEVR-Robot's state seen from a push: where every ball lies relative to the pushed one, along and across the push.

A grounding model reads a state as ten table coordinates and an action as one of 40 symbols; whether a push moves a
second ball depends on the offset between the two balls measured along and across the push, a product of state and
action that a model has to discover on its own. From the coordinates and the action, a classifier trained only on
"does this other ball move?" finds 21 % of the real collisions; from these offsets, 91 %
(``benchmarks/clevr_collision_probe.py``, which reads each ball's features with one network shared by all balls). A
grounding model with ``model.action_frame: clevr-push`` encodes these features the same way, ball by ball, and adds
the result to each action slot (:mod:`imaginebench.envs.action_frames`).
"""

from __future__ import annotations

import torch
from torch import Tensor

from imaginebench.envs.clevr.layout import DIRECTIONS, NUM_BALLS

BALL_FEATURES = 10
"""Per ball: its offset from the pushed ball along and across the push and on the table's axes, its position, the
pushed ball's position and the push's unit direction (the last two the same for every ball)."""


def push_frame(states: Tensor, actions: Tensor) -> Tensor:
    """``states`` ``(..., 10)`` (table coordinates) and ``actions`` ``(...)`` (``ball * 8 + direction``) →
    ``(..., NUM_BALLS, BALL_FEATURES)``, one row per ball in colour order. The pushed ball's own offsets are zero."""
    balls = states.unflatten(-1, (NUM_BALLS, 2))
    pushed, direction = actions.long().div(len(DIRECTIONS), rounding_mode="floor"), actions.long() % len(DIRECTIONS)
    table = torch.as_tensor(DIRECTIONS, dtype=states.dtype, device=states.device)
    unit = (table / table.norm(dim=-1, keepdim=True))[direction]
    pushed_ball = balls.gather(-2, pushed[..., None, None].expand(*pushed.shape, 1, 2))
    offset = balls - pushed_ball
    along = (offset * unit[..., None, :]).sum(-1)
    across = offset[..., 0] * unit[..., None, 1] - offset[..., 1] * unit[..., None, 0]
    per_ball = torch.stack([along, across], -1), offset, balls, pushed_ball.expand_as(balls)
    return torch.cat([*per_ball, unit[..., None, :].expand_as(balls)], -1)
