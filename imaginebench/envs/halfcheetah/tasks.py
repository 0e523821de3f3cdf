"""HalfCheetah tasks per level: success checks as pure functions of state sequences, and the dense
task rewards the experts are trained on (and the env pays).

Every check reads a sequence from the episode's first state (whose displacement is 0), so it judges
generated states without a simulator. Fixes of the original's checks (quirks 7-8 of docs/original-benchmark.md), each
measured by ``benchmarks/task_success.py --env Mujoco-v0``:

* "jump" means jumping: the torso rises ``JUMP_HEIGHT`` above its start while level, and lands
  (drops below ``LAND_HEIGHT``) before the next jump counts. The original only asked for net
  displacement after 5 steps, which random actions met 9-10 times out of 10.
* jump-in-place needs jumps too (zero actions met the original's "|Σ Δx| < 1.05 at step 15").
* runs are judged on speed held over a ``WINDOW`` (the distance of the last 5 s), so the train
  "run" tasks and the easy "faster" tasks differ in speed, not only in when they are checked.
* the composite hard tasks are staged: first reach ``SHUTTLE_DISTANCE`` one way, then come back
  past the start.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from imaginebench.envs.halfcheetah.layout import DT, PITCH, VX, VZ, Z, positions, wrapped_pitch

HORIZON = 200
WINDOW = 100
"""Steps (5 s) over which a run's speed is judged."""
RUN_SPEED = 1.0
"""m/s over the window for run-forward / run-backward (5 m in 5 s)."""
FAST_SPEED = 2.5
"""m/s over the window for the easy "faster" tasks (12.5 m in 5 s)."""
RUN_TARGET_SPEED = 1.75
"""The speed the train run experts are rewarded for holding: above RUN_SPEED, below FAST_SPEED, so
the train data never shows the easy tasks solved."""
JUMP_HEIGHT = 0.25
"""Torso height (relative to the model's start, the cheetah stands at about -0.13) that counts as a jump."""
LAND_HEIGHT = 0.0
"""The torso must come back below this before another jump counts."""
LEVEL_PITCH = 0.8
"""A jump counts only with the torso within this many radians of level (not rearing or flipping)."""
JUMPS = 3
JUMP_DISTANCE = 1.0
"""Net displacement (m) of jump-forward / jump-backward."""
IN_PLACE = 0.5
"""Largest |net displacement| (m) of jump-in-place."""
SHUTTLE_DISTANCE = 3.0
CTRL_COST = 0.1
STEP_COST = 10.0
"""Subtracted from the reward of every step, whose task reward is capped at it (expert steps reach 9.4), so no
step before success pays more than 0 and success, which ends the episode, never pays less than going on. With
the task rewards alone (positive for the jumps, the "faster" runs and the two-leg tasks) and no success bonus, a
value-based learner was paid to avoid success: TD3+BC's jump-backward episodes returned 480 over 200 steps
without success, the expert's about 100 over 90 steps with it. The experts train on the task rewards alone
(``SkillTrainingEnv`` never ends an episode early)."""
JUMP_REWARD = 10.0
CLIMB_REWARD = 2.0
HOP_SPEED = 0.5
"""m/s the jump-forward / jump-backward experts are rewarded for travelling at."""

Check = Callable[[np.ndarray], np.ndarray]
"""states (T, 18) from the episode's start → bool (T,): the goal holds at that state."""
Reward = Callable[[np.ndarray], float]
"""states (t + 1, 18) from the episode's start → the dense reward of reaching the last one
(without the control cost)."""


def jump_counts(states: np.ndarray) -> np.ndarray:
    """Number of completed take-offs up to each state (a take-off: level torso above JUMP_HEIGHT,
    armed again once the torso is back below LAND_HEIGHT)."""
    z, level = states[:, Z], np.abs(wrapped_pitch(states)) <= LEVEL_PITCH
    counts, armed, count = np.zeros(len(states), dtype=np.int64), True, 0
    for t in range(len(states)):
        if armed and z[t] >= JUMP_HEIGHT and level[t]:
            count, armed = count + 1, False
        elif z[t] <= LAND_HEIGHT:
            armed = True
        counts[t] = count
    return counts


def _run(direction: int, speed: float) -> Check:
    def check(states: np.ndarray) -> np.ndarray:
        x = positions(states)
        flags = np.zeros(len(x), dtype=bool)
        if len(x) > WINDOW:
            flags[WINDOW:] = direction * (x[WINDOW:] - x[:-WINDOW]) >= speed * WINDOW * DT
        return flags

    return check


def _jump(direction: int) -> Check:
    """direction 0: in place."""

    def check(states: np.ndarray) -> np.ndarray:
        x, jumped = positions(states), jump_counts(states) >= JUMPS
        moved = np.abs(x) <= IN_PLACE if direction == 0 else direction * x >= JUMP_DISTANCE
        return jumped & moved

    return check


def shuttle_stages(direction: int, states: np.ndarray) -> np.ndarray:
    """Stages completed at each state of "go ``direction`` then come back": 1 once the cheetah is
    SHUTTLE_DISTANCE out, 2 once it is back past its start after that."""
    x = direction * positions(states)
    out = np.maximum.accumulate(x >= SHUTTLE_DISTANCE)
    back = out & (x <= 0.0)
    return out.astype(np.int64) + np.maximum.accumulate(back).astype(np.int64)


def _shuttle(direction: int) -> Check:
    return lambda states: shuttle_stages(direction, states) == 2


# ----------------------------------------------------------------------------- rewards


def run_reward(direction: int, target: float | None) -> Reward:
    """Velocity reward: held near ``target`` m/s, or as fast as possible (``None``)."""

    def reward(states: np.ndarray) -> float:
        v = direction * states[-1, VX]
        return float(v if target is None else -abs(v - target))

    return reward


def jump_reward(direction: int) -> Reward:
    """Height and climb of a level torso (so take-offs pay, running does not), and travel at
    HOP_SPEED in ``direction`` (in place: no travel). An earlier reward (height plus progress
    capped at 1 m/s) taught running, not jumping."""

    def reward(states: np.ndarray) -> float:
        state = states[-1]
        level = max(float(np.cos(state[PITCH])), 0.0)
        lift = JUMP_REWARD * max(float(state[Z]), 0.0) + CLIMB_REWARD * max(float(state[VZ]), 0.0)
        v = float(state[VX])
        travel = -abs(v) if direction == 0 else -abs(direction * v - HOP_SPEED)
        return level * lift + travel

    return reward


def shuttle_reward(direction: int) -> Reward:
    """Speed in ``direction`` until the cheetah is out, then speed back."""

    def reward(states: np.ndarray) -> float:
        way = direction if shuttle_stages(direction, states)[-1] == 0 else -direction
        return float(way * states[-1, VX])

    return reward


@dataclass(frozen=True)
class Task:
    """``skills``: the trained experts that solve it, in stage order (see ``expert.py``).
    ``reward``: the dense reward the env pays (plus the control cost)."""

    name: str
    check: Check
    skills: tuple[str, ...]
    reward: Reward


def _task(name: str, check: Check, skills: tuple[str, ...], reward: Reward | None = None) -> Task:
    return Task(name, check, skills, reward or SKILL_REWARDS[skills[0]])


SKILL_REWARDS: dict[str, Reward] = {
    "run-forward": run_reward(1, RUN_TARGET_SPEED),
    "run-backward": run_reward(-1, RUN_TARGET_SPEED),
    "run-forward-fast": run_reward(1, None),
    "run-backward-fast": run_reward(-1, None),
    "jump-forward": jump_reward(1),
    "jump-backward": jump_reward(-1),
}
"""One trained expert per skill, each on its reward (``imaginebench experts train --task SKILL``)."""

TASKS: dict[str, Task] = {
    task.name: task
    for task in (
        _task("run-forward", _run(1, RUN_SPEED), ("run-forward",)),
        _task("run-backward", _run(-1, RUN_SPEED), ("run-backward",)),
        _task("jump-forward", _jump(1), ("run-forward", "jump-forward"), jump_reward(1)),
        _task("jump-backward", _jump(-1), ("run-backward", "jump-backward"), jump_reward(-1)),
        _task("run-forward-faster", _run(1, FAST_SPEED), ("run-forward-fast",)),
        _task("run-backward-faster", _run(-1, FAST_SPEED), ("run-backward-fast",)),
        _task("forward-then-backward", _shuttle(1), ("run-forward", "run-backward"), shuttle_reward(1)),
        _task("backward-then-forward", _shuttle(-1), ("run-backward", "run-forward"), shuttle_reward(-1)),
        _task("jump-in-place", _jump(0), ("jump-forward", "jump-backward"), jump_reward(0)),
    )
}

LEVEL_TASKS: dict[str, tuple[str, ...]] = {
    "train": ("run-forward", "run-backward", "jump-forward", "jump-backward"),
    "easy": ("run-forward-faster", "run-backward-faster"),
    "hard": ("forward-then-backward", "backward-then-forward", "jump-in-place"),
}
LEVEL_TASKS["rephrase"] = LEVEL_TASKS["train"]
