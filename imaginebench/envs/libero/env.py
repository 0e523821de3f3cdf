"""The Libero-v0 env: the floor scene, 44-number states, 7-d OSC_POSE actions, horizon 500.

Reset draws a start from the task's initial-state bank (:mod:`imaginebench.envs.libero.banks`)
with the env's seeded generator; an episode ends on success or at the horizon. Reward is the
shaped reward of :func:`imaginebench.envs.libero.tasks.reward`, measured from the new episode's
first state (quirk 14 of docs/original-benchmark.md fixed).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from imaginebench.envs.base import ImagineBenchEnv
from imaginebench.envs.libero.banks import start_bank
from imaginebench.envs.libero.layout import STATE_DIM, state_violations
from imaginebench.envs.libero.phrasings import PHRASINGS
from imaginebench.envs.libero.simulator import Snapshot, floor_scene
from imaginebench.envs.libero.tasks import HORIZON, LEVEL_TASKS, TASKS, Task, reward, rollout_rewards
from imaginebench.envs.staged import advance_stage, staged_success_flags
from imaginebench.instructions import InstructionTable
from imaginebench.levels import resolve_level

STATE_TOLERANCE = 0.01
"""1 cm (and 0.01 of a quaternion or joint angle): well below every success radius (>= 0.04)."""


class LiberoEnv(ImagineBenchEnv):
    """``Libero-v0``: state (44,) + instruction embedding; continuous 7-d actions."""

    state_rules = staticmethod(state_violations)

    env_id = "Libero-v0"
    metadata = {"render_modes": []}
    state_space = spaces.Box(-np.inf, np.inf, (STATE_DIM,), np.float32)
    action_space = spaces.Box(-1.0, 1.0, (7,), np.float32)
    state_tolerance = STATE_TOLERANCE
    horizon = HORIZON
    state_determines_simulator = False
    """The 44 numbers hold joint angles and poses but no velocities (robot or objects), nor the
    gripper's ramped command or the controller's orientation goal (see ``simulator.Snapshot``), so
    ``set_state`` is not offered and one-step transition checks are unavailable (the open-loop
    replay still works)."""

    def __init__(self, level: str, instructions: InstructionTable, task: str | None = None):
        level = resolve_level(level)
        super().__init__(level, LEVEL_TASKS[level], instructions, task)
        self.scene = floor_scene()
        self.spec_task: Task | None = None
        self.stage = 0
        self.step_count = 0
        self.start_state = np.zeros(STATE_DIM)
        self._state = np.zeros(STATE_DIM)
        self._snapshot: Snapshot | None = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self.task = self._choose_task(options)
        self.spec_task = TASKS[self.task]
        bank = start_bank(self.spec_task.start, self.spec_task.start_object)
        self.scene.restore(
            Snapshot.from_row(bank[int(self.np_random.integers(len(bank)))]), owner=self
        )  # zero warm start
        self._snapshot = self.scene.snapshot()
        self.stage, self.step_count = 0, 0
        self.start_state = self._state = self.scene.state()
        templates = PHRASINGS[self.level][self.task]
        self.instruction = templates[int(self.np_random.integers(len(templates)))]
        return self._observation(self._state), self._info(False)

    def step(self, action):
        if self.spec_task is None or self._snapshot is None:
            raise RuntimeError("Libero-v0: call reset() before step()")
        action = np.asarray(action, dtype=np.float64).reshape(-1)
        if action.shape != (7,) or not np.all(np.isfinite(action)):
            raise ValueError(f"Libero-v0: action must be 7 finite numbers, got {action.tolist()}")
        if self.scene.owner is not self:
            self.scene.restore(self._snapshot, owner=self)
        self.scene.step(np.clip(action, -1.0, 1.0))
        self._snapshot = self.scene.snapshot()
        self.step_count += 1
        previous, self._state = self._state, self.scene.state()
        before, self.stage = self.stage, advance_stage(self.spec_task.stages, self.stage, self._state, self.start_state)
        success = self.stage == len(self.spec_task.stages)
        step_reward = reward(self.spec_task, before, self.stage, previous, self._state, self.start_state)
        truncated = not success and self.step_count >= self.horizon
        return self._observation(self._state), step_reward, success, truncated, self._info(success)

    def state(self) -> np.ndarray:
        """The current 44-number state (a copy)."""
        return self._state.copy()

    def goal_flags(self, states: np.ndarray, legal: np.ndarray) -> np.ndarray:
        """Stages tracked along the sequence (from the episode's first state)."""
        assert self.spec_task is not None, "Libero-v0: call reset() before success_flags()"
        return staged_success_flags(self.spec_task.stages, states)

    def imagined_rewards(self, states: np.ndarray, actions: np.ndarray, success: np.ndarray) -> np.ndarray:
        """``step``'s shaped reward, a function of the states alone (:func:`~imaginebench.envs.libero.tasks.rollout_rewards`)."""
        assert self.spec_task is not None, "Libero-v0: call reset() before imagined_rewards()"
        return rollout_rewards(self.spec_task, states, success)
