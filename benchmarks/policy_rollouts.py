"""Episode loops of ``task_success.py`` and the other benchmarks that play policies: one protocol for every domain.

Episode ``k`` of a task uses reset seed ``seed + k``; a policy is built fresh per episode by
``make_policy(seed, k)`` (the random policies seed their generator with ``(seed, k)``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterator, Mapping

import numpy as np

PolicyFactory = Callable[[int, int], Callable]
"""(seed, episode) → a fresh policy ``env → action`` for that episode."""


def run_episode(env, policy) -> tuple[bool, int]:
    """Play from the state the last ``reset`` produced until the episode ends."""
    steps, done, info = 0, False, {"is_success": False}
    while not done:
        _, _, terminated, truncated, info = env.step(policy(env))
        steps, done = steps + 1, terminated or truncated
    return bool(info["is_success"]), steps


def measure(env, make_policy: PolicyFactory, episodes: int, seed: int) -> tuple[float, float, float]:
    """(success rate, mean length, env steps per second incl. the policy) of one policy on the env's task;
    NaN for zero episodes (a policy left out of a run)."""
    if episodes == 0:
        return float("nan"), float("nan"), float("nan")
    outcomes = []
    start = time.perf_counter()
    for k in range(episodes):
        env.reset(seed=seed + k)
        outcomes.append(run_episode(env, make_policy(seed, k)))
    elapsed = time.perf_counter() - start
    successes, lengths = np.array(outcomes).T
    return float(successes.mean()), float(lengths.mean()), float(lengths.sum() / elapsed)


def uniform_discrete(num_actions: int) -> PolicyFactory:
    def make_policy(seed: int, episode: int) -> Callable:
        rng = np.random.default_rng([seed, episode])
        return lambda _env: int(rng.integers(num_actions))

    return make_policy


def uniform_continuous(action_dim: int) -> PolicyFactory:
    def make_policy(seed: int, episode: int) -> Callable:
        rng = np.random.default_rng([seed, episode])
        return lambda _env: rng.uniform(-1.0, 1.0, action_dim).astype(np.float32)

    return make_policy


def domain_policies(domain) -> dict[str, PolicyFactory]:
    """The domain's expert (a fresh one per episode), uniformly random actions and, for continuous actions,
    zero actions (standing still must not solve a task either)."""
    expert: PolicyFactory = lambda _seed, _episode: domain.expert()  # noqa: E731
    if domain.action_kind == "discrete":
        return {"expert": expert, "random": uniform_discrete(domain.num_actions)}
    zero = np.zeros(domain.action_dim, dtype=np.float32)
    return {"expert": expert, "random": uniform_continuous(domain.action_dim), "zero": lambda _s, _e: lambda _env: zero}


def measure_task(
    env_id: str, level: str, task: str, policies: dict[str, PolicyFactory], episodes: int | Mapping[str, int], seed: int
) -> dict[str, tuple[float, float, float]]:
    """policy name → :func:`measure` on one task of one level (``episodes``: per policy, or one count for all)."""
    import imaginebench

    env = imaginebench.make(env_id, level=level, task=task)
    counts = episodes if isinstance(episodes, Mapping) else dict.fromkeys(policies, episodes)
    results = {name: measure(env, make_policy, counts[name], seed) for name, make_policy in policies.items()}
    env.close()
    return results


def measure_every_task(
    domain, policies: dict[str, PolicyFactory], episodes: int | Mapping[str, int], seed: int, only: Collection[str] = ()
) -> Iterator[tuple[str, str, dict[str, tuple[float, float, float]]]]:
    """``(level, task, policy name → measure)`` for every level's tasks (or only those named in
    ``only``); a task that several levels share (train and rephrase differ only in wording) is played once."""
    import imaginebench

    unknown = set(only) - {task for tasks in domain.tasks.values() for task in tasks}
    if unknown:
        raise ValueError(f"--tasks: {domain.env_id} has no task {sorted(unknown)}")
    measured: dict[str, dict] = {}
    for level in imaginebench.LEVELS:
        for task in domain.tasks[level]:
            if only and task not in only:
                continue
            if task not in measured:
                measured[task] = measure_task(domain.env_id, level, task, policies, episodes, seed)
            yield level, task, measured[task]
