"""The HalfCheetah expert: the shipped SAC actors, one per skill, sequenced for composite tasks.

Two-leg tasks run the first skill until its leg is done, let the cheetah coast (zero action) until
it is nearly still, then run the second skill (switching heads at full speed flipped the cheetah
onto its back running backward-then-forward: 10 % success). forward-then-backward (and its mirror):
the legs are the task's stages. jump-forward / jump-backward: run ``JUMP_TRAVEL`` in the direction,
then jump; the jump heads jump well but hold their direction poorly (jump-backward's head alone: 0 %
at 26k steps, its net displacement within ±0.7 m). jump-in-place jumps with the two jump heads in
turn, switching whenever the cheetah drifts ``SWITCH_DISTANCE`` from its start.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

import numpy as np

from imaginebench.assets import ASSETS_DIR
from imaginebench.envs.halfcheetah.layout import VX, positions
from imaginebench.envs.halfcheetah.tasks import IN_PLACE, JUMP_DISTANCE, TASKS, Task, shuttle_stages
from imaginebench.experts.policy import MeanAction, load_policy

if TYPE_CHECKING:
    from imaginebench.envs.halfcheetah.env import HalfCheetahEnv

SWITCH_DISTANCE = 0.4 * IN_PLACE
SETTLE_SPEED = 0.3
"""m/s below which a second leg starts."""
JUMP_TRAVEL = 1.5 * JUMP_DISTANCE


EXPERT_DIR = ASSETS_DIR / "Mujoco-v0" / "experts"
"""Skill-conditioned SAC actors (``imaginebench experts train --env Mujoco-v0 --skills ...``)."""
CHECKPOINTS = {
    "run-forward": "runs.pt",
    "run-backward": "runs.pt",
    "run-forward-fast": "runs.pt",
    "run-backward-fast": "runs.pt",
    "jump-forward": "jumps.pt",
    "jump-backward": "jumps.pt",
}
"""The shipped checkpoint under ``EXPERT_DIR`` whose head acts for each skill (see its README)."""


@cache
def checkpoint(name: str) -> MeanAction:
    path = EXPERT_DIR / name
    if not path.is_file():
        raise FileNotFoundError(
            f"Mujoco-v0: no experts at {path}; see assets/Mujoco-v0/experts/README.md for the command"
        )
    return load_policy(path)


def skill_action(skill: str, state: np.ndarray) -> np.ndarray:
    policy = checkpoint(CHECKPOINTS[skill])
    return policy(state, policy.info["skills"].index(skill))


def first_leg_done(task: Task, states: np.ndarray) -> bool:
    direction = 1 if task.skills[0] == "run-forward" else -1
    if task.name.startswith("jump-"):
        return bool(direction * positions(states)[-1] >= JUMP_TRAVEL)
    return bool(shuttle_stages(direction, states)[-1] >= 1)


class HalfCheetahExpert:
    """``expert(env) -> action`` (float32 in [-1, 1]) for any Mujoco-v0 task."""

    def __init__(self) -> None:
        self._jump_skill = 0
        self._settled = False

    def __call__(self, env: HalfCheetahEnv) -> np.ndarray:
        states = env.states()
        task = TASKS[env.task]
        if len(states) == 1:
            self._jump_skill, self._settled = 0, False
        if task.name == "jump-in-place":
            skill = task.skills[self._in_place_skill(positions(states)[-1])]
        elif len(task.skills) == 2:
            if not first_leg_done(task, states):
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
