"""The CLEVR-Robot env (``Ball-v0``): five balls on a walled table, 40 push actions.

Reward is sparse: 1 on the step that reaches the goal, 0 otherwise. The original shaped
rewards by distance changes that only exist for some tasks; the datasets carry success anyway.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from imaginebench.envs.base import ImagineBenchEnv
from imaginebench.envs.clevr.layout import (
    NUM_ACTIONS,
    NUM_BALLS,
    STATE_DIM,
    STATE_FIELDS,
    STATE_HIGH,
    STATE_LOW,
    positions_of,
    state_of,
    state_violations,
)
from imaginebench.envs.clevr.phrasings import instruction
from imaginebench.envs.clevr.physics import Table
from imaginebench.envs.clevr.tasks import LEVEL_TASKS, TASKS, Goal, is_success, sample_start
from imaginebench.instructions import InstructionTable
from imaginebench.levels import resolve_level


class ClevrEnv(ImagineBenchEnv):
    """``Ball-v0``: state (10,) = the (x, y) of the red, blue, green, purple and cyan balls, plus the
    instruction embedding; ``Discrete(40)``: action ``ball * 8 + direction`` pushes that ball."""

    state_rules = staticmethod(state_violations)

    env_id = "Ball-v0"
    metadata = {"render_modes": []}
    state_space = spaces.Box(STATE_LOW, STATE_HIGH, (STATE_DIM,), np.float32)
    state_fields = STATE_FIELDS
    action_space = spaces.Discrete(NUM_ACTIONS)
    state_tolerance = 0.02
    """A fifth of a ball radius: generated positions closer than this to the simulated ones match."""
    state_determines_simulator = True
    """Every push ends with all velocities zeroed and the pusher parked off the table, so between
    steps the ten ball coordinates are the whole simulator state."""

    def __init__(self, level: str, instructions: InstructionTable, task: str | None = None):
        level = resolve_level(level)
        super().__init__(level, LEVEL_TASKS[level], instructions, task)
        self._table = Table()
        self.goal: Goal | None = None
        self.start_positions = np.zeros((NUM_BALLS, 2))
        self.step_count = 0

    @property
    def horizon(self) -> int:
        """Pushes allowed in the current task's episode (``tasks.Task.horizon``)."""
        return TASKS[self.task].horizon

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """``options``: ``{"task": name}`` picks the task; ``{"start": entry}`` starts from a stored
        evaluation episode (``{"positions", "goal", "instruction"}``, see ``evaluation_set``)."""
        super().reset(seed=seed)
        options = options or {}
        if "start" in options:
            entry = options["start"]
            goal = Goal.from_json(entry["goal"])
            self.task = self._choose_task({"task": goal.task})
            positions, self.instruction = np.asarray(entry["positions"], dtype=np.float64), str(entry["instruction"])
            problems = state_violations(positions)
            if problems:
                raise ValueError(f"Ball-v0: reset option start.positions is not a legal layout: {'; '.join(problems)}")
            self.instructions.row(self.instruction)  # fails early, naming the text, if the level cannot emit it
        else:
            self.task = self._choose_task(options)
            positions, goal = sample_start(self.task, self.np_random)
            self.instruction = instruction(self.level, goal, self.np_random)
        self.goal = goal
        self._table.set_positions(positions)
        self.start_positions = self._table.positions()
        self.step_count = 0
        return self._observation(self.state()), self._info(is_success(self.start_positions, self.start_positions, goal))

    def step(self, action):
        if self.goal is None:
            raise RuntimeError("Ball-v0: call reset() before step()")
        positions = self._table.push(int(action))
        self.step_count += 1
        success = is_success(positions, self.start_positions, self.goal)
        truncated = not success and self.step_count >= self.horizon
        return self._observation(self.state()), float(success), success, truncated, self._info(success)

    def positions(self) -> np.ndarray:
        """Current ball centres ``(5, 2)`` (what the expert and success checks read)."""
        return self._table.positions()

    def state(self) -> np.ndarray:
        return state_of(self._table.positions())

    def set_state(self, state: np.ndarray) -> None:
        """Place the balls at rest and park the pusher, as after a push (start positions stay)."""
        self._table.set_positions(positions_of(self._settable(state)))

    def state_violations_within_tolerance(self, state: np.ndarray) -> list[str]:
        """Touching balls stand two radii apart, so positions within the 0.02 tolerance of theirs can overlap
        by up to 0.057, beyond ``LEGALITY_SLACK``: the rules loosened by the tolerance."""
        return state_violations(state, tolerance=self.state_tolerance)

    def goal_flags(self, states: np.ndarray, legal: np.ndarray) -> np.ndarray:
        """The goal judged on each state; one-step tasks measure movement from ``states[0]``, the
        episode's first state."""
        assert self.goal is not None, "Ball-v0: call reset() before success_flags()"
        start = positions_of(states[0])
        return np.array([is_success(positions_of(s), start, self.goal) for s in states], dtype=bool)
