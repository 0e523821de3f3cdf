"""The HalfCheetah expert: the shipped SAC actors, one per skill, sequenced for composite tasks.

Two-leg tasks (forward-then-backward and its mirror) run the first skill until its leg is done, let
the cheetah coast (zero action) until it is nearly still, then run the second skill (switching heads
at full speed flipped the cheetah onto its back running backward-then-forward: 10 % success).

The jump tasks are Markov in the 18-number state: the head is chosen from the latest state's forward
velocity (``VX``) alone, so a state-only policy (behaviour cloning) can learn the choice from the data.
The state holds the last step's displacement but not the position, so the earlier rule (run
``1.5 m``, then jump; jump-in-place switching heads with a latch on drifting 0.2 m from the start)
could not be read off the state. Behaviour cloning (3 epochs on 300 train episodes, 3 seeds) made
2-12 % on jump-forward and 14-34 % on jump-backward from that rule's data, 96-100 % and 92-96 % from
this rule's (docs/domains/halfcheetah.md, "Known limits").

* jump-forward / jump-backward: the jump head while the velocity in the task's direction is at
  least ``JUMP_SPEED``, the run head below it. The jump heads jump well but hold their direction
  poorly (jump-backward's head alone: 0 % at 26k steps, its net displacement within ±0.7 m), so the
  run head takes over whenever they stall or slide back, and the cheetah jumps while moving the right
  way: the displacement builds up over the jumps.
* jump-in-place: the jump-backward head while moving forward, the jump-forward head otherwise, so
  every step pushes against the drift (100 % of 200 episodes; the latch rule: 94 % of 50).
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

import numpy as np

from imaginebench.assets import ASSETS_DIR
from imaginebench.envs.halfcheetah.layout import VX
from imaginebench.envs.halfcheetah.tasks import TASKS, Task, shuttle_stages
from imaginebench.experts.policy import MeanAction, load_policy

if TYPE_CHECKING:
    from imaginebench.envs.halfcheetah.env import HalfCheetahEnv

SETTLE_SPEED = 0.3
"""m/s below which a second leg starts."""
JUMP_SPEED = 0.15
"""m/s in the task's direction from which jump-forward / jump-backward use the jump head. Measured
(seed 0): any threshold from 0.05 to 0.25 m/s solves 98-99 % of 200 jump-forward and 99-100 % of 200
jump-backward episodes; of 50 episodes, 94 % / 100 % at 0, 96 % / 96 % at 0.3, 80 % / 94 % at 0.4,
42 % / 38 % at 0.7, 76 % / 100 % at -0.25. This value is the middle of the plateau."""


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
    return bool(shuttle_stages(direction, states)[-1] >= 1)


def jump_skill(task: Task, state: np.ndarray) -> str:
    """The head a jump task uses in ``state``: a function of that state alone (see the module docstring)."""
    if task.name == "jump-in-place":
        return task.skills[1] if state[VX] > 0.0 else task.skills[0]
    direction = 1 if task.skills[0] == "run-forward" else -1
    return task.skills[1] if direction * state[VX] >= JUMP_SPEED else task.skills[0]


class HalfCheetahExpert:
    """``expert(env) -> action`` (float32 in [-1, 1]) for any Mujoco-v0 task; on the jump tasks a
    function of the latest state alone."""

    def __init__(self) -> None:
        self._settled = False

    def __call__(self, env: HalfCheetahEnv) -> np.ndarray:
        states = env.states()
        task = TASKS[env.task]
        if len(states) == 1:
            self._settled = False
        if task.name.startswith("jump-"):
            skill = jump_skill(task, states[-1])
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
