"""The HalfCheetah expert: the shipped SAC actors, one per skill, sequenced for composite tasks.

forward-then-backward (and its mirror) runs the first skill until the stage is done, lets the
cheetah coast (zero action) until it is nearly still, then runs the second skill (switching heads
at full speed flipped the cheetah onto its back running backward-then-forward: 10 % success); jump-in-place jumps forward and backward in turn, switching whenever the cheetah drifts
``SWITCH_DISTANCE`` from its start, so it keeps jumping but stays near where it began.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from imaginebench.envs.halfcheetah.layout import VX, positions
from imaginebench.envs.halfcheetah.tasks import IN_PLACE, TASKS, shuttle_stages
from imaginebench.experts.policy import MeanAction, load_policy

if TYPE_CHECKING:
    from imaginebench.envs.halfcheetah.env import HalfCheetahEnv

SWITCH_DISTANCE = 0.4 * IN_PLACE
SETTLE_SPEED = 0.3
"""m/s below which a shuttle's second leg starts."""


CHECKPOINTS = {"run-forward": "runs.pt", "run-backward": "runs.pt", "run-forward-fast": "runs.pt", "run-backward-fast": "runs.pt",
               "jump-forward": "jumps.pt", "jump-backward": "jumps.pt"}  # fmt: skip
"""The shipped checkpoint under ``EXPERT_DIR`` whose head acts for each skill (see its README)."""


@lru_cache(maxsize=None)
def checkpoint(name: str) -> MeanAction:
    from imaginebench.envs.halfcheetah import EXPERT_DIR

    path = EXPERT_DIR / name
    if not path.is_file():
        raise FileNotFoundError(f"Mujoco-v0: no experts at {path}; see assets/Mujoco-v0/experts/README.md for the command")
    return load_policy(path)


def skill_action(skill: str, state: np.ndarray) -> np.ndarray:
    policy = checkpoint(CHECKPOINTS[skill])
    return policy(state, policy.info["skills"].index(skill))


class HalfCheetahExpert:
    """``expert(env) -> action`` (float32 in [-1, 1]) for any Mujoco-v0 task."""

    def __init__(self) -> None:
        self._jump_skill = 0
        self._settled = False

    def __call__(self, env: "HalfCheetahEnv") -> np.ndarray:
        states = env.states()
        task = TASKS[env.task]
        if len(states) == 1:
            self._jump_skill, self._settled = 0, False
        if task.name == "jump-in-place":
            skill = task.skills[self._in_place_skill(positions(states)[-1])]
        elif len(task.skills) == 2:
            direction = 1 if task.skills[0] == "run-forward" else -1
            if shuttle_stages(direction, states)[-1] == 0:
                skill = task.skills[0]
            else:
                self._settled = self._settled or abs(states[-1, VX]) < SETTLE_SPEED
                if not self._settled:
                    return np.zeros(6, dtype=np.float32)
                skill = task.skills[1]
        else:
            skill = task.skills[0]
        return np.clip(skill_action(skill, states[-1]), -1.0, 1.0).astype(np.float32)

    def _in_place_skill(self, x: float) -> int:
        """0 (jump forward) or 1 (jump backward), switching once past ±SWITCH_DISTANCE."""
        if x > SWITCH_DISTANCE:
            self._jump_skill = 1
        elif x < -SWITCH_DISTANCE:
            self._jump_skill = 0
        return self._jump_skill
