"""BabyAI's state seen from an action: where the ball, box, key and door lie relative to the agent.

A grounding model reads a state as 17 numbers and an action as one of 7 symbols. Whether an action changes anything
depends on relations between those numbers: a pick-up takes the object on the agent's own cell, a drop needs that
cell empty, a toggle reaches a door next to the agent and unlocks it only with the key of its colour. Read from the
raw numbers, grounded models did not learn them: BabyAI's imagined rollouts go wrong first where a pick-up the
simulator refuses fills the hand, or a locked door opens without its key (docs/grounding-findings.md). These features
give every object its offset from the agent and the relations the rules read, one row per object, in the layout
``model.action_frame`` reads (:mod:`imaginebench.envs.action_frames`), so one network shared by the four objects learns
each rule once.
"""

from __future__ import annotations

import torch
from torch import Tensor
from torch.nn.functional import one_hot

from imaginebench.envs.babyai.layout import COLOR_TO_IDX, DOOR_LOCKED, NUM_ACTIONS, OBJECT_TO_IDX, OBJECTS, STATE_INDEX

FRAMED = (*OBJECTS, "door")
"""The rows of the frame, in this order."""
COLORS = len(COLOR_TO_IDX)
OBJECT_FEATURES = 2 + 2 + 5 + len(FRAMED) + (DOOR_LOCKED + 1) + COLORS + NUM_ACTIONS
"""Per object: its offset from the agent (columns, rows); the agent's cell (where a drop puts the carried object);
whether it lies on the agent's cell, whether next to it, whether the agent carries it, whether its colour is the
door's and whether the agent carries anything; its kind, the door's state, its colour (a pick-up copies it into
``carry_color``) and the action (each one-hot)."""


def agent_frame(states: Tensor, actions: Tensor) -> Tensor:
    """``states`` ``(..., 17)`` (the env's state vector; rounded, as imagined states may be off whole numbers) and
    ``actions`` ``(...)`` → ``(..., 4, OBJECT_FEATURES)``, one row per object of :data:`FRAMED`. A carried object has
    no cell: its offset is zero and it is neither on nor next to the agent's cell."""
    values = states.round()

    def field(name: str) -> Tensor:
        return values[..., STATE_INDEX[name]]

    carried_type = field("carry_type")
    carried = torch.stack(
        [carried_type == OBJECT_TO_IDX[obj] for obj in OBJECTS] + [torch.zeros_like(carried_type, dtype=torch.bool)],
        -1,
    )
    columns = torch.stack([field(f"{obj}_col") for obj in FRAMED], -1)
    rows = torch.stack([field(f"{obj}_row") for obj in FRAMED], -1)
    offset = torch.stack([columns - field("agent_col")[..., None], rows - field("agent_row")[..., None]], -1)
    offset = offset * (~carried)[..., None]
    distance = offset.abs().sum(-1)
    on_cell, next_to = (distance == 0) & ~carried, (distance == 1) & ~carried
    colors = torch.stack([field(f"{obj}_color") for obj in FRAMED], -1)
    same_color = colors == field("door_color")[..., None]
    holding = (carried_type > 0)[..., None].expand_as(carried)
    flags = torch.stack([on_cell, next_to, carried, same_color, holding], -1)
    kind = torch.eye(len(FRAMED), device=states.device).expand(*states.shape[:-1], -1, -1)
    door_state = one_hot(field("door_state").clamp(0, DOOR_LOCKED).long(), DOOR_LOCKED + 1)
    action = one_hot(actions.long().clamp(0, NUM_ACTIONS - 1), NUM_ACTIONS)
    color = one_hot(colors.clamp(0, COLORS - 1).long(), COLORS)
    door_state, action = (part[..., None, :].expand(*carried.shape, -1) for part in (door_state, action))
    agent = torch.stack([field("agent_col"), field("agent_row")], -1)[..., None, :].expand_as(offset)
    parts = offset, agent, flags, kind, door_state, color, action
    return torch.cat([part.to(states.dtype) for part in parts], -1)
