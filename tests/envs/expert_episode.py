"""One episode of a domain's expert, for env tests that check success flags on the whole state sequence."""

from __future__ import annotations

import numpy as np

from imaginebench.envs.domain import Domain


def run_expert(domain: Domain, env, seed: int, task: str) -> tuple[np.ndarray, dict]:
    """The episode's states (reset state first) and the last step's info."""
    expert = domain.expert()
    obs, _ = env.reset(seed=seed, options={"task": task})
    states, done = [obs["state"]], False
    while not done:
        obs, reward, terminated, truncated, info = env.step(expert(env))
        states.append(obs["state"])
        done = terminated or truncated
    return np.stack(states), info
