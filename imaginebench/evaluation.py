"""Policy evaluation in the real environments: equal episodes per task, fixed seeds, vector envs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from functools import partial

import gymnasium as gym
import numpy as np
import torch

from imaginebench.envs.domain import Domain
from imaginebench.envs.episode_queue import QUEUE_DONE, Episode, EpisodeQueue
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


MAX_ENVS = 64
"""About how many sub-envs an evaluation keeps (each task's share is rounded, and every task gets one):
each plays its run of episodes back to back (:mod:`imaginebench.envs.episode_queue`). Enough rows for the
batched policy and two or more workers; few enough that Meta-World's kept scenes (72 sub-envs for its
four levels) peak at 2.4 GB in one process, where one per episode (320) reached 7.8."""


class EvaluationEnvs:
    """The envs of one or more levels' evaluation, built once and reused by every evaluation.

    Episode ``k`` of a task is the ``k``-th of its level's ``episodes_per_task`` and starts from reset
    seed ``seed + j``, ``j`` its position among the level's episodes (tasks in order), or from entry
    ``k`` of the domain's stored evaluation set. Each task's episodes are split into runs of
    consecutive ones, one run per sub-env (runs per task in proportion to its steps, about ``max_envs``
    runs in all: :func:`_runs_per_task`), which plays them back to back; every episode resets with its own seed and
    start, so the results are those of one fresh env per episode (tested). Keeping the envs saves rebuilding the
    simulators (and starting workers) at every evaluation during training.
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
        max_envs: int = MAX_ENVS,
    ) -> None:
        check_at_least(1, {"workers": workers, "max_envs": max_envs, "episodes_per_task": episodes_per_task})
        domain = get_domain(env_id)
        self.levels = list(levels)
        self.episodes: list[tuple[str, str]] = []  # (level, task) of each episode, in order
        runs = _runs_per_task(env_id, levels, episodes_per_task, encoder, pooling, max_envs)
        factories = []
        for level in levels:
            offset = 0
            for task in domain.tasks[level]:
                queue = []
                for start in _stored_starts(domain, level, task, episodes_per_task):
                    queue.append(Episode(len(self.episodes), offset, start))
                    self.episodes.append((level, task))
                    offset += 1
                for run in np.array_split(np.arange(episodes_per_task), runs[level, task]):
                    factories.append(partial(_make_env, env_id, level, task, encoder, pooling, [queue[i] for i in run]))
        if workers is None:
            workers = available_cores() if domain.evaluation_in_subprocesses else 1
        workers = min(workers, len(factories))
        if workers > 1:
            for level in levels:  # encoded once here, not raced for by every worker
                instruction_table(env_id, level, encoder, pooling)
        self.envs = WorkerVectorEnv(factories, workers) if workers > 1 else gym.vector.SyncVectorEnv(factories)

    def evaluate(self, act: ActFn, seed: int, device: torch.device | str = "cpu") -> dict[str, LevelResult]:
        """Every episode once, from ``seed`` (see the class docstring); per-level results."""
        success, returns, lengths = _run_episodes(act, self.envs, len(self.episodes), seed, device)
        return {level: self._level_result(level, success, returns, lengths) for level in self.levels}

    def _level_result(self, level: str, success: np.ndarray, returns: np.ndarray, lengths: np.ndarray) -> LevelResult:
        in_level = np.array([episode_level == level for episode_level, _ in self.episodes])
        per_task = {}
        for task in dict.fromkeys(task for episode_level, task in self.episodes if episode_level == level):
            rows = np.array([episode == (level, task) for episode in self.episodes])
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
    act: ActFn, envs: gym.vector.VectorEnv, episodes: int, seed: int, device: torch.device | str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Success, return and length of every episode of the sub-envs' queues (:class:`EpisodeQueue`)."""
    success, returns, lengths = np.zeros(episodes, bool), np.zeros(episodes), np.zeros(episodes, int)
    obs, _ = envs.reset(seed=[seed] * envs.num_envs)
    done = np.zeros(envs.num_envs, dtype=bool)
    while not done.all():
        with torch.no_grad():
            action = act(
                torch.as_tensor(obs["state"], device=device),
                torch.as_tensor(obs["instruction_embedding"], device=device),
            )
        obs, _, _, _, info = envs.step(action.cpu().numpy())
        if "outcome_episode" in info:
            ended = info["_outcome_episode"]
            numbers = info["outcome_episode"][ended]
            success[numbers] = info["outcome_success"][ended]
            returns[numbers] = info["outcome_return"][ended]
            lengths[numbers] = info["outcome_length"][ended]
        done |= info[QUEUE_DONE]
    return success, returns, lengths


def _runs_per_task(
    env_id: str, levels: list[str], episodes_per_task: int, encoder: str, pooling: str, max_envs: int
) -> dict[tuple[str, str], int]:
    """How many sub-envs share each task's episodes: in proportion to the task's steps (episodes × its
    horizon), about ``max_envs`` in all (rounded), at least one and at most one per episode a task. Equal steps per
    sub-env keep the workers busy to the end: an evaluation lasts as long as its longest run, and once
    only a few runs remain each step is mostly overhead."""
    tasks = [(level, task) for level in levels for task in get_domain(env_id).tasks[level]]
    if episodes_per_task * len(tasks) <= max_envs:
        return dict.fromkeys(tasks, episodes_per_task)
    horizons = {}
    for level, task in tasks:
        env = make(env_id, level, task=task, encoder=encoder, pooling=pooling)
        horizons[level, task] = env.horizon
        env.close()
    total = sum(horizons.values())
    return {
        pair: min(episodes_per_task, max(1, round(max_envs * horizon / total))) for pair, horizon in horizons.items()
    }


def _stored_starts(domain: Domain, level: str, task: str, episodes: int) -> list[dict | None]:
    if domain.evaluation_starts is None:
        return [None] * episodes
    starts = domain.evaluation_starts(level, task)
    if len(starts) < episodes:
        raise ValueError(
            f"{domain.env_id}: episodes_per_task={episodes}, but the evaluation set of {level}/{task} holds {len(starts)}"
        )
    return starts[:episodes]


def _make_env(env_id: str, level: str, task: str, encoder: str, pooling: str, episodes: list[Episode]) -> gym.Env:
    return EpisodeQueue(make(env_id, level, task=task, encoder=encoder, pooling=pooling), episodes)


def format_level_table(results: dict[str, LevelResult]) -> str:
    """A plain-text table: one row per level, then its tasks indented."""
    lines = [f"{'level / task':<22}{'success':>9}{'return':>9}{'length':>8}"]
    for level, result in results.items():
        lines.append(f"{level:<22}{result.success_rate:>9.1%}{result.mean_return:>9.3f}{result.mean_length:>8.1f}")
        for task, r in result.per_task.items():
            lines.append(f"  {task:<20}{r.success_rate:>9.1%}{r.mean_return:>9.3f}{r.mean_length:>8.1f}")
    return "\n".join(lines)
