"""The HalfCheetah env: run and jump tasks on gymnasium's HalfCheetah-v5 (docs/original-benchmark.md#halfcheetah).

State (18): the step's forward displacement (0 at reset, where the original put the absolute x),
then the package's 17 observations. Actions Box(-1, 1, (6,)). An episode ends on success or after
200 steps. Reward: the task's dense reward (``tasks.py``) capped at and less ``STEP_COST``, minus the
package's control cost, so every step before success pays at most 0.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from imaginebench.envs.base import ImagineBenchEnv
from imaginebench.envs.halfcheetah.layout import STATE_DIM, STATE_TOLERANCE, state_violations
from imaginebench.envs.halfcheetah.phrasings import PHRASINGS
from imaginebench.envs.halfcheetah.simulator import ACTION_DIM, Cheetah, control_cost
from imaginebench.envs.halfcheetah.tasks import HORIZON, LEVEL_TASKS, STEP_COST, TASKS
from imaginebench.instructions import InstructionTable
from imaginebench.levels import resolve_level


class HalfCheetahEnv(ImagineBenchEnv):
    """``Mujoco-v0``: state (18,) + instruction embedding; continuous 6-d actions."""

    state_rules = staticmethod(state_violations)

    env_id = "Mujoco-v0"
    metadata = {"render_modes": ["rgb_array"], "render_fps": 20}
    state_space = spaces.Box(-np.inf, np.inf, (STATE_DIM,), np.float32)
    action_space = spaces.Box(-1.0, 1.0, (ACTION_DIM,), np.float32)
    horizon = HORIZON
    state_tolerance = STATE_TOLERANCE
    state_determines_simulator = True
    """The 17 observations are qpos[1:] and qvel; the root x they leave out plays no part in the
    dynamics, and the step's displacement (the first number) is a record, not a cause. A step from
    a set float64 state equals the real one exactly; from a float32-stored one it differs by up to
    ~1e-3 (measured on expert data), within ``state_tolerance``."""

    def __init__(
        self, level: str, instructions: InstructionTable, task: str | None = None, render_mode: str | None = None
    ):
        level = resolve_level(level)
        super().__init__(level, LEVEL_TASKS[level], instructions, task)
        self.render_mode = render_mode
        self.cheetah = Cheetah(render_mode=render_mode)
        self.history: list[np.ndarray] = []

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self.task = self._choose_task(options)
        state = self.cheetah.reset(int(self.np_random.integers(2**31 - 1)))
        self.history = [state]
        texts = PHRASINGS[self.level][self.task]
        self.instruction = texts[int(self.np_random.integers(len(texts)))]
        return self._observation(state), self._info(False)

    def step(self, action):
        if not self.history:
            raise RuntimeError("Mujoco-v0: call reset() before step()")
        action = np.asarray(action, dtype=np.float64).reshape(-1)
        if action.shape != (ACTION_DIM,) or not np.all(np.isfinite(action)):
            raise ValueError(f"Mujoco-v0: action must be {ACTION_DIM} finite numbers, got {action.tolist()}")
        action = np.clip(action, -1.0, 1.0)
        state = self.cheetah.step(action)
        self.history.append(state)
        states = np.asarray(self.history)
        success = bool(TASKS[self.task].check(states)[-1])
        reward = self._reward(states, action)
        truncated = not success and len(self.history) - 1 >= HORIZON
        return self._observation(state), reward, success, truncated, self._info(success)

    def state(self) -> np.ndarray:
        if not self.history:
            raise RuntimeError("Mujoco-v0: call reset() first")
        return self.history[-1].copy()

    def set_state(self, state: np.ndarray) -> None:
        """The simulator takes ``state``, which replaces the episode's latest state (the earlier
        ones stay, for the task checks that read the sequence)."""
        if not self.history:
            raise RuntimeError("Mujoco-v0: call reset() before set_state()")
        self.history[-1] = self.cheetah.set_state(self._settable(state))

    def states(self) -> np.ndarray:
        """The episode so far, from the reset state: (t + 1, 18)."""
        return np.asarray(self.history)

    # ------------------------------------------------------------------ imagination contract

    def goal_flags(self, states: np.ndarray, legal: np.ndarray) -> np.ndarray:
        """The current task's check along the sequence."""
        return TASKS[self.task].check(states)

    def imagined_rewards(self, states: np.ndarray, actions: np.ndarray, success: np.ndarray) -> np.ndarray:
        """The dense reward ``step`` pays, from the generated states: every task reward is a function of the
        states since the episode's start, and success only ends the episode (it pays nothing extra)."""
        states = np.asarray(states, dtype=np.float64)
        return np.array(
            [self._reward(states[: t + 2], action) for t, action in enumerate(np.asarray(actions, dtype=np.float64))]
        )

    def _reward(self, states: np.ndarray, action: np.ndarray) -> float:
        """The reward of reaching ``states[-1]`` (the episode from its start) with ``action``: one
        definition for real and imagined steps. The action is clipped as ``step`` executes it."""
        task_reward = min(TASKS[self.task].reward(states), STEP_COST)
        return task_reward - STEP_COST - control_cost(np.clip(action, -1.0, 1.0))

    def render(self):
        return self.cheetah.package.render()

    def close(self) -> None:
        self.cheetah.close()
