"""Named action frames: features of a state seen from an action, which a grounding model adds to each action slot.

A domain whose dynamics depend on where objects lie relative to the object an action moves (a push hits a ball in its
path) can name such a function here; ``model.action_frame: NAME`` in a grounding config turns it on, and the
checkpoint records the name, so imagination computes the same features from each generated state and action.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from torch import Tensor

from imaginebench.envs.babyai import layout as babyai_layout
from imaginebench.envs.babyai.agent_frame import FRAMED, OBJECT_FEATURES, agent_frame
from imaginebench.envs.clevr import layout as clevr_layout
from imaginebench.envs.clevr.push_frame import BALL_FEATURES, push_frame


@dataclass(frozen=True)
class ActionFrame:
    """``features(states (..., state_dim), actions (...)) → (..., objects, object_dim)``: one row of features per
    object, for one env's state and action layout."""

    features: Callable[[Tensor, Tensor], Tensor]
    objects: int
    object_dim: int
    state_dim: int
    num_actions: int


ACTION_FRAMES: dict[str, ActionFrame] = {
    "babyai-agent": ActionFrame(
        agent_frame, len(FRAMED), OBJECT_FEATURES, babyai_layout.STATE_DIM, babyai_layout.NUM_ACTIONS
    ),
    "clevr-push": ActionFrame(
        push_frame, clevr_layout.NUM_BALLS, BALL_FEATURES, clevr_layout.STATE_DIM, clevr_layout.NUM_ACTIONS
    ),
}


def get_action_frame(name: str, state_dim: int, num_actions: int) -> ActionFrame:
    """The frame called ``name``, checked against the env's layout; a one-line error names the option otherwise."""
    frame = ACTION_FRAMES.get(name)
    if frame is None:
        raise ValueError(f"model.action_frame: unknown frame {name!r}; known: {', '.join(sorted(ACTION_FRAMES))}")
    if (frame.state_dim, frame.num_actions) != (state_dim, num_actions):
        raise ValueError(
            f"model.action_frame: {name!r} reads {frame.state_dim} state numbers and {frame.num_actions} actions, "
            f"this env has {state_dim} and {num_actions}"
        )
    return frame
