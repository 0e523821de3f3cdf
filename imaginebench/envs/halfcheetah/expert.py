"""The HalfCheetah expert: the shipped SAC actors, one per skill, sequenced for composite tasks.

forward-then-backward (and its mirror) runs the first skill until the stage is done, then the
second; jump-in-place jumps forward and backward in turn, switching whenever the cheetah drifts
``SWITCH_DISTANCE`` from its start, so it keeps jumping but stays near where it began.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from imaginebench.envs.halfcheetah.layout import positions
from imaginebench.envs.halfcheetah.tasks import IN_PLACE, TASKS, shuttle_stages
from imaginebench.experts.policy import MeanAction, load_policy

if TYPE_CHECKING:
    from imaginebench.envs.halfcheetah.env import HalfCheetahEnv

SWITCH_DISTANCE = 0.4 * IN_PLACE


@lru_cache(maxsize=None)
def skills_policy() -> MeanAction:
    from imaginebench.envs.halfcheetah import EXPERT_DIR

    path = EXPERT_DIR / "skills.pt"
    if not path.is_file():
        raise FileNotFoundError(f"Mujoco-v0: no experts at {path}; train them with `imaginebench experts train --env Mujoco-v0`")
    return load_policy(path)


def skill_action(skill: str, state: np.ndarray) -> np.ndarray:
    policy = skills_policy()
    return policy(state, policy.info["skills"].index(skill))


class HalfCheetahExpert:
    """``expert(env) -> action`` (float32 in [-1, 1]) for any Mujoco-v0 task."""

    def __init__(self) -> None:
        self._jump_skill = 0

    def __call__(self, env: "HalfCheetahEnv") -> np.ndarray:
        states = env.states()
        task = TASKS[env.task]
        if task.name == "jump-in-place":
            skill = task.skills[self._in_place_skill(positions(states)[-1], fresh=len(states) == 1)]
        elif len(task.skills) == 2:
            direction = 1 if task.skills[0] == "run-forward" else -1
            skill = task.skills[min(int(shuttle_stages(direction, states)[-1]), 1)]
        else:
            skill = task.skills[0]
        return np.clip(skill_action(skill, states[-1]), -1.0, 1.0).astype(np.float32)

    def _in_place_skill(self, x: float, fresh: bool) -> int:
        """0 (jump forward) or 1 (jump backward), switching once past ±SWITCH_DISTANCE."""
        if fresh:
            self._jump_skill = 0
        if x > SWITCH_DISTANCE:
            self._jump_skill = 1
        elif x < -SWITCH_DISTANCE:
            self._jump_skill = 0
        return self._jump_skill
