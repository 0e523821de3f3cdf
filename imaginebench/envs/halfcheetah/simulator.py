"""gymnasium's ``HalfCheetah-v5`` (default model, frame skip 5, reset noise 0.1) read as the
18-number state, plus the task-reward env the experts are trained in."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.envs.mujoco.half_cheetah_v5 import HalfCheetahEnv as PackageCheetah

from imaginebench.envs.halfcheetah.layout import DX, POSITIONS, STATE_DIM, VELOCITIES
from imaginebench.envs.halfcheetah.tasks import CTRL_COST, HORIZON, SKILL_REWARDS

ACTION_DIM = 6


class Cheetah:
    """The package env stepped by us: ``reset`` and ``step`` return the 18-number state."""

    def __init__(self, render_mode: str | None = None) -> None:
        self.package = PackageCheetah(render_mode=render_mode)

    def reset(self, seed: int) -> np.ndarray:
        observation, _ = self.package.reset(seed=seed)
        return np.concatenate([[0.0], observation])

    def step(self, action: np.ndarray) -> np.ndarray:
        x_before = float(self.package.data.qpos[0])
        observation, *_ = self.package.step(np.clip(action, -1.0, 1.0))
        return np.concatenate([[float(self.package.data.qpos[0]) - x_before], observation])

    def set_state(self, state: np.ndarray) -> np.ndarray:
        """Set qpos[1:] and qvel from the 18 numbers; the root x stays where it is (the floor is
        an infinite plane, so no step depends on it). Returns the state read back."""
        data = self.package.data
        self.package.set_state(
            np.concatenate([[data.qpos[0]], state[POSITIONS]]), np.asarray(state[VELOCITIES], dtype=np.float64)
        )
        return np.concatenate([[state[DX]], self.package._get_obs()])

    def joint_ranges(self) -> np.ndarray:
        """(6, 2) limits of the six leg joints (the model's ``jnt_range``)."""
        return self.package.model.jnt_range[3:].copy()

    def close(self) -> None:
        self.package.close()


def control_cost(action: np.ndarray) -> float:
    return CTRL_COST * float(np.sum(np.square(action)))


class SkillTrainingEnv(gym.Env):
    """The skills' rewards (``info["skill_rewards"]``, control cost included) on the bare state,
    with no instruction and no early end: what the expert trainer (``imaginebench experts train``)
    learns from. Episodes last the benchmark's horizon."""

    observation_space = gym.spaces.Box(-np.inf, np.inf, (STATE_DIM,), np.float64)
    action_space = gym.spaces.Box(-1.0, 1.0, (ACTION_DIM,), np.float32)

    def __init__(self, skills: tuple[str, ...]) -> None:
        unknown = [skill for skill in skills if skill not in SKILL_REWARDS]
        if unknown or not skills:
            raise ValueError(f"Mujoco-v0: unknown skills {unknown} (--skills); valid: {', '.join(SKILL_REWARDS)}")
        self.skills = tuple(skills)
        self.cheetah = Cheetah()
        self.steps = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self.steps = 0
        return self.cheetah.reset(int(self.np_random.integers(2**31 - 1))), {}

    def step(self, action):
        action = np.asarray(action, dtype=np.float64)
        state = self.cheetah.step(action)
        self.steps += 1
        cost = control_cost(action)
        rewards = np.array([SKILL_REWARDS[skill](state[None]) - cost for skill in self.skills])
        return state, float(rewards[0]), False, self.steps >= HORIZON, {"skill_rewards": rewards}
