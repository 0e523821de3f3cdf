"""The Meta-World env: package tasks (and two composites) behind the fixed 91-number entity layout.

Actions are the package's: Box(-1, 1, (4,)), a hand displacement (scaled by 1/100 by the package)
and a gripper effort. An episode ends on success or at the task's horizon. Reward is the original's
(docs/original-benchmark.md#meta-world): the change of the package's dense 0-10 reward (0 before the first step), and 10 on
the step that succeeds. Composite tasks keep the dense reward of the scene they run in (coffee-push,
door-unlock) through both stages: a shaping signal only, success is what the benchmark scores.
Imaginary rollouts get only the success part (``reward_on_success``): the dense part needs the simulator.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from imaginebench.envs.base import ImagineBenchEnv
from imaginebench.envs.metaworld import simulator
from imaginebench.envs.metaworld.distractors import draw_distractor
from imaginebench.envs.metaworld.layout import STATE_DIM, compose_state, state_violations
from imaginebench.envs.metaworld.phrasings import PHRASINGS
from imaginebench.envs.metaworld.tasks import LEVEL_TASKS, TASKS, Task
from imaginebench.envs.staged import advance_stage, staged_success_flags
from imaginebench.instructions import InstructionTable
from imaginebench.levels import resolve_level

SUCCESS_REWARD = 10.0
STATE_TOLERANCE = 0.01
"""1 cm (and 0.01 of a unit quaternion or gripper opening): below every success radius (>= 0.02),
above the contact jitter of a resting object (~1 mm), so a generated state within it is the same
physical situation as the simulated one."""


class MetaWorldEnv(ImagineBenchEnv):
    """``MetaWorld-v0``: state (91,) + instruction embedding; continuous 4-d actions."""

    state_rules = staticmethod(state_violations)

    env_id = "MetaWorld-v0"
    metadata = {"render_modes": ["rgb_array"], "render_fps": 20}
    state_space = spaces.Box(-np.inf, np.inf, (STATE_DIM,), np.float32)
    action_space = spaces.Box(-1.0, 1.0, (4,), np.float32)
    state_tolerance = STATE_TOLERANCE
    state_determines_simulator = False
    """The 91 numbers hold the hand position, the finger opening and object poses, but not the arm's
    joint angles, the mocap target, the finger joints or any velocity, so ``set_state`` is not
    offered and one-step transition checks are unavailable (the open-loop replay still works)."""

    def __init__(
        self, level: str, instructions: InstructionTable, task: str | None = None, render_mode: str | None = None
    ):
        level = resolve_level(level)
        super().__init__(level, LEVEL_TASKS[level], instructions, task)
        self.render_mode = render_mode
        self._sims: dict[str, Any] = {}
        self.spec_task: Task | None = None
        self.stage = 0
        self.targets: list[np.ndarray] = []
        self.distractor: tuple[str, np.ndarray] | None = None
        self.step_count = 0
        self._last_reward = 0.0
        self._state: np.ndarray | None = None

    @property
    def horizon(self) -> int:
        return self.spec_task.horizon if self.spec_task is not None else TASKS[self.task].horizon

    @property
    def sim(self):
        """The package env running the current task (built on first use, then reused)."""
        if self.task not in self._sims:
            sim = simulator.build_sim(TASKS[self.task])
            if self.render_mode is not None:
                sim.render_mode = self.render_mode
            self._sims[self.task] = sim
        return self._sims[self.task]

    # ------------------------------------------------------------------ gymnasium API

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self.task = self._choose_task(options)
        self.spec_task = TASKS[self.task]
        sim = self.sim
        sim.seed(int(self.np_random.integers(2**31 - 1)))
        observation = simulator.reset_observation(sim)
        self.targets = simulator.stage_targets(sim, self.spec_task)
        self.stage, self.step_count, self._last_reward = 0, 0, 0.0
        self.distractor = draw_distractor(self.spec_task.entities, self.np_random)
        templates = PHRASINGS[self.level][self.task]
        self.instruction = templates[int(self.np_random.integers(len(templates)))]
        self._state = self.start_state = self._read_state(observation)
        return self._observation(self._state), self._info(False)

    def step(self, action):
        if self.spec_task is None:
            raise RuntimeError("MetaWorld-v0: call reset() before step()")
        action = np.asarray(action, dtype=np.float64).reshape(-1)
        if action.shape != (4,) or not np.all(np.isfinite(action)):
            raise ValueError(f"MetaWorld-v0: action must be 4 finite numbers, got {action.tolist()}")
        observation, dense, _, _, _ = self.sim.step(np.clip(action, -1.0, 1.0))
        self.step_count += 1
        self._state = state = self._read_state(observation)
        self.stage = advance_stage(self.spec_task.stages, self.stage, state, self.start_state)
        success = self.stage == len(self.spec_task.stages)
        reward = SUCCESS_REWARD if success else float(dense) - self._last_reward
        self._last_reward = float(dense)
        truncated = not success and self.step_count >= self.horizon
        return self._observation(state), reward, success, truncated, self._info(success)

    def state(self) -> np.ndarray:
        """The current 91-number state (a copy)."""
        if self._state is None:
            raise RuntimeError("MetaWorld-v0: call reset() first")
        return self._state.copy()

    def _read_state(self, observation: np.ndarray) -> np.ndarray:
        """The state after a package reset or step; the target is the current stage's, so the
        state that completes a stage still shows that stage's target."""
        assert self.spec_task is not None and self.distractor is not None
        current = observation[:18]
        entities = simulator.read_entities(self.sim, self.spec_task, current)
        entities[self.distractor[0]] = self.distractor[1]
        target = self.targets[min(self.stage, len(self.targets) - 1)]
        return compose_state(current[:3], float(current[3]), target, entities)

    # ------------------------------------------------------------------ imagination contract

    def goal_flags(self, states: np.ndarray, legal: np.ndarray) -> np.ndarray:
        """Stages are tracked along the sequence."""
        assert self.spec_task is not None, "MetaWorld-v0: call reset() before success_flags()"
        return staged_success_flags(self.spec_task.stages, states)

    def reward_on_success(self, steps_taken: int) -> float:
        """``step``'s 10 on success, so imaginary rollouts are rewarded 10 on the step that succeeds and 0
        elsewhere: sparse, where real steps pay the change of the package's dense reward. That reward reads
        what the 91 numbers leave out (the finger sites whose midpoint is the tool centre, the finger pads'
        positions and contacts with the object, initial positions the package keeps), so generated states
        cannot give it; the success step at least pays what it pays in the real data."""
        return SUCCESS_REWARD

    def render(self):
        return self.sim.render()

    def close(self) -> None:
        for sim in self._sims.values():
            sim.close()
        self._sims.clear()
