"""One sub-env of an evaluation playing a fixed list of episodes, one after another, then idling.

An evaluation steps a vector env until its last episode ends. With one sub-env per episode, every
simulator lives for the whole evaluation (a Meta-World scene model is ~21 MB: 320 of them for its four
levels), and a vector env resets each finished sub-env and steps it on, for results that are masked
out. Here a sub-env plays its queue of episodes back to back, resetting itself between them with each
episode's own seed and start, and reports each finished episode in ``info``; it never returns
terminated or truncated, so the vector env never autoresets it, and once its queue is done its steps
return the last transition again without simulating. Its ``info`` holds only the outcomes and
``QUEUE_DONE``: the env's own keys, gathered from every sub-env at every step, would cost the vector
env (and a worker's pipe) more than an idle sub-env's step. Written by hand: gymnasium's vector envs
run one episode stream per sub-env, with no seed per episode.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gymnasium as gym

OUTCOME_KEYS = ("episode", "success", "return", "length")
"""``info["outcome_<key>"]`` on the step that ends an episode (its number, whether it succeeded, its return, its length)."""
QUEUE_DONE = "queue_done"
"""``info[QUEUE_DONE]``: every episode of the queue has ended."""


@dataclass(frozen=True)
class Episode:
    number: int
    """Its index in the evaluation's list of episodes."""
    seed_offset: int
    """Reset with the evaluation's seed plus this."""
    options: dict | None
    """Reset options (a stored start), or ``None``."""


class EpisodeQueue(gym.Wrapper):
    """Plays ``episodes`` in order from each ``reset(seed=base)``; see the module docstring."""

    def __init__(self, env: gym.Env, episodes: list[Episode]) -> None:
        super().__init__(env)
        if not episodes:
            raise ValueError("EpisodeQueue needs at least one episode")
        self.episodes = episodes
        self._base_seed = 0
        self._next = 0
        self._return, self._length = 0.0, 0
        self._idle: tuple | None = None

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Start the queue over; ``seed`` is the evaluation's base seed (``options`` are the episodes' own)."""
        self._base_seed = 0 if seed is None else seed
        self._next, self._idle = 0, None
        observation, _ = self._start_next()
        return observation, {QUEUE_DONE: False}

    def step(self, action):
        if self._idle is not None:
            return self._idle
        observation, reward, terminated, truncated, info = self.env.step(action)
        self._return += float(reward)
        self._length += 1
        if not (terminated or truncated):
            return observation, reward, False, False, {QUEUE_DONE: False}
        outcome = self._outcome(info)
        if self._next < len(self.episodes):
            observation, _ = self._start_next()
            return observation, reward, False, False, {**outcome, QUEUE_DONE: False}
        self._idle = (observation, 0.0, False, False, {QUEUE_DONE: True})
        return observation, reward, False, False, {**outcome, QUEUE_DONE: True}

    def _start_next(self) -> tuple[Any, dict]:
        episode = self.episodes[self._next]
        self._next += 1
        self._return, self._length = 0.0, 0
        return self.env.reset(seed=self._base_seed + episode.seed_offset, options=episode.options)

    def _outcome(self, info: dict) -> dict[str, Any]:
        episode = self.episodes[self._next - 1]
        values = (episode.number, bool(info["is_success"]), self._return, self._length)
        return {f"outcome_{key}": value for key, value in zip(OUTCOME_KEYS, values)}
