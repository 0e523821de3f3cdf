"""Policy evaluation in the real environments: equal episodes per task, fixed seeds, vector envs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from functools import partial

import gymnasium as gym
import numpy as np
import torch

from imaginebench.envs.domain import Domain
from imaginebench.envs.worker_vector_env import WorkerVectorEnv
from imaginebench.errors import check_at_least
from imaginebench.instructions import DEFAULT_ENCODER
from imaginebench.processes import available_cores
from imaginebench.registry import get_domain, instruction_table, make

ActFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
"""``act(state, instruction_embedding) -> action``, batched."""


@dataclass
class TaskResult:
    episodes: int
    success_rate: float
    mean_return: float
    mean_length: float


@dataclass
class LevelResult:
    level: str
    success_rate: float
    """Mean over tasks (equal weight per task, as every task gets the same number of episodes)."""
    mean_return: float
    mean_length: float
    per_task: dict[str, TaskResult] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


class EvaluationEnvs:
    """The sub-envs of one or more levels' evaluation, built once and reused by every evaluation.

    Each evaluation resets every sub-env with its fixed seed, so a reused set gives what a freshly
    built one gives (tested); keeping it saves rebuilding the simulators (and starting workers) at every
    evaluation during training. All levels step in one vector env, so workers get one big batch.
    ``workers``: processes stepping the envs, each a contiguous block of them (:class:`WorkerVectorEnv`;
    the policy stays here); 1 steps them in this process, ``None`` takes the domain's default (all cores
    where ``Domain.evaluation_in_subprocesses``, else 1). The results do not depend on it. Workers are
    spawned, so a script using more than one needs the ``if __name__ == "__main__":`` guard. Close it
    (or use it as a context manager).
    """

    def __init__(
        self,
        env_id: str,
        levels: list[str],
        episodes_per_task: int,
        encoder: str = DEFAULT_ENCODER,
        pooling: str = "mean",
        workers: int | None = None,
    ) -> None:
        check_at_least(1, {"workers": workers})
        domain = get_domain(env_id)
        self.assignments: list[tuple[str, str]] = []  # (level, task) of each sub-env
        factories = []
        for level in levels:
            for task in domain.tasks[level]:
                for start in _stored_starts(domain, level, task, episodes_per_task):
                    self.assignments.append((level, task))
                    factories.append(partial(_make_env, env_id, level, task, encoder, pooling, start))
        self.levels = list(levels)
        if workers is None:
            workers = available_cores() if domain.evaluation_in_subprocesses else 1
        workers = min(workers, len(factories))
        if workers > 1:
            for level in levels:  # encoded once here, not raced for by every worker
                instruction_table(env_id, level, encoder, pooling)
        self.envs = WorkerVectorEnv(factories, workers) if workers > 1 else gym.vector.SyncVectorEnv(factories)

    def evaluate(self, act: ActFn, seed: int, device: torch.device | str = "cpu") -> dict[str, LevelResult]:
        """One episode per sub-env; episode ``k`` of a level gets seed ``seed + k`` (see :func:`evaluate_level`)."""
        counts = {level: sum(a[0] == level for a in self.assignments) for level in self.levels}
        seeds = [seed + k for level in self.levels for k in range(counts[level])]
        success, returns, lengths = _run_episodes(act, self.envs, seeds, device)
        return {level: self._level_result(level, success, returns, lengths) for level in self.levels}

    def _level_result(self, level: str, success: np.ndarray, returns: np.ndarray, lengths: np.ndarray) -> LevelResult:
        in_level = np.array([a[0] == level for a in self.assignments])
        per_task = {}
        for task in dict.fromkeys(task for lvl, task in self.assignments if lvl == level):
            rows = np.array([a == (level, task) for a in self.assignments])
            per_task[task] = TaskResult(
                int(rows.sum()), float(success[rows].mean()), float(returns[rows].mean()), float(lengths[rows].mean())
            )
        return LevelResult(
            level=level,
            success_rate=float(np.mean([r.success_rate for r in per_task.values()])),
            mean_return=float(returns[in_level].mean()),
            mean_length=float(lengths[in_level].mean()),
            per_task=per_task,
        )

    def close(self) -> None:
        self.envs.close()

    def __enter__(self) -> EvaluationEnvs:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def evaluate_level(
    act: ActFn,
    env_id: str,
    level: str,
    episodes_per_task: int,
    seed: int,
    device: torch.device | str = "cpu",
    encoder: str = DEFAULT_ENCODER,
    pooling: str = "mean",
    workers: int | None = None,
) -> LevelResult:
    """Run ``episodes_per_task`` episodes of every task of ``level`` at once in a vector env.

    Episode ``k`` of every evaluation uses seed ``seed + k``, so successive evaluations during
    training see the same start states and are comparable. Domains with a stored evaluation set
    (``Domain.evaluation_starts``) start episode ``k`` of a task from its entry ``k`` instead.
    ``workers``: see :class:`EvaluationEnvs`, which keeps the envs for repeated evaluations.
    """
    with EvaluationEnvs(env_id, [level], episodes_per_task, encoder, pooling, workers) as envs:
        return envs.evaluate(act, seed, device)[level]


def _run_episodes(
    act: ActFn, envs: gym.vector.VectorEnv, seeds: list[int], device: torch.device | str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Success, return and length of one episode per sub-env, sub-env ``k`` reset with ``seeds[k]``."""
    n = envs.num_envs
    obs, _ = envs.reset(seed=seeds)
    active = np.ones(n, dtype=bool)
    success, returns, lengths = np.zeros(n, bool), np.zeros(n), np.zeros(n, int)
    while active.any():
        with torch.no_grad():
            action = act(
                torch.as_tensor(obs["state"], device=device),
                torch.as_tensor(obs["instruction_embedding"], device=device),
            )
        # finished envs autoreset; their results are masked out
        obs, reward, terminated, truncated, info = envs.step(action.cpu().numpy())
        returns[active] += reward[active]
        lengths[active] += 1
        success[active] = info["is_success"][active]
        active &= ~(terminated | truncated)
    return success, returns, lengths


class _StartFrom(gym.Wrapper):
    """Resets its env from fixed options: a vector env hands every sub-env the same ``options``."""

    def __init__(self, env: gym.Env, options: dict) -> None:
        super().__init__(env)
        self._options = options

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        return self.env.reset(seed=seed, options=self._options)


def _stored_starts(domain: Domain, level: str, task: str, episodes: int) -> list[dict | None]:
    if domain.evaluation_starts is None:
        return [None] * episodes
    starts = domain.evaluation_starts(level, task)
    if len(starts) < episodes:
        raise ValueError(
            f"{domain.env_id}: episodes_per_task={episodes}, but the evaluation set of {level}/{task} holds {len(starts)}"
        )
    return starts[:episodes]


def _make_env(env_id: str, level: str, task: str, encoder: str, pooling: str, start: dict | None) -> gym.Env:
    env = make(env_id, level, task=task, encoder=encoder, pooling=pooling)
    return env if start is None else _StartFrom(env, start)


def format_level_table(results: dict[str, LevelResult]) -> str:
    """A plain-text table: one row per level, then its tasks indented."""
    lines = [f"{'level / task':<22}{'success':>9}{'return':>9}{'length':>8}"]
    for level, result in results.items():
        lines.append(f"{level:<22}{result.success_rate:>9.1%}{result.mean_return:>9.3f}{result.mean_length:>8.1f}")
        for task, r in result.per_task.items():
            lines.append(f"  {task:<20}{r.success_rate:>9.1%}{r.mean_return:>9.3f}{r.mean_length:>8.1f}")
    return "\n".join(lines)
