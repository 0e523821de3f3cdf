"""Episodes of a policy in a domain's env, recorded as a dataset records them, for env tests that check
success flags and rewards on whole state sequences."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from imaginebench.envs.domain import Domain


@dataclass
class Episode:
    states: np.ndarray
    """``(T + 1, S)`` observation states, the reset state first (float32, as datasets store them)."""
    actions: np.ndarray
    rewards: np.ndarray
    success: np.ndarray
    """``(T + 1,)`` ``info["is_success"]`` after the reset and after each step."""
    info: dict
    """The last step's."""


def record_episode(env, policy: Callable, seed: int, task: str, max_steps: int | None = None) -> Episode:
    """One episode of ``policy(env)`` from ``env.reset(seed=seed)`` on ``task``, to its end or ``max_steps``."""
    obs, info = env.reset(seed=seed, options={"task": task})
    states, actions, rewards, success, done = [obs["state"]], [], [], [info["is_success"]], False
    while not done and len(actions) != max_steps:
        action = policy(env)
        obs, reward, terminated, truncated, info = env.step(action)
        states.append(obs["state"])
        actions.append(action)
        rewards.append(reward)
        success.append(info["is_success"])
        done = terminated or truncated
    return Episode(np.stack(states), np.array(actions), np.array(rewards), np.array(success), info)


def run_expert(domain: Domain, env, seed: int, task: str) -> tuple[np.ndarray, dict]:
    """The expert episode's states (reset state first) and the last step's info."""
    episode = record_episode(env, domain.expert(), seed, task)
    return episode.states, episode.info
