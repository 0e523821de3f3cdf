"""Automatic quality measures of imaginary rollouts (the ImagineBench paper judged them by hand).

Each rollout is replayed in the simulator from the start state its recorded seed gives:
- goal consistency: the env's success check holds on some generated state;
- transition error: a generated next state differs (beyond the env's ``state_tolerance``) from
  the state the simulator reaches by executing the generated actions from the same start;
- illegal state: a generated state the env cannot reach (the domain's ``state_violations``).
Real expert data passes every check, which the tests use as a reference.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
from tqdm.auto import tqdm

from imaginebench.collect import episode_seed
from imaginebench.datasets import DatasetError, EpisodeDataset
from imaginebench.datasets.episodes import episode_row_ranges
from imaginebench.registry import make
from imaginebench.storage import atomic_write_text


RolloutCheck = Literal["goal", "transitions", "legal"]
ROLLOUT_CHECKS: tuple[str, ...] = ("goal", "transitions", "legal")


@dataclass
class RolloutChecks:
    episode_id: int
    task: str
    length: int
    goal_consistent: bool
    transition_errors: int
    illegal_states: int
    violations: list[str] = field(default_factory=list)


def check_rollouts(dataset: EpisodeDataset, progress: bool = False) -> list[RolloutChecks]:
    """Replay every episode of ``dataset`` (seeded as ``collect``/``imagine`` seed them) and check it."""
    metadata, where = dataset.metadata, dataset.path or "dataset"
    seed = (metadata.get("generator") or {}).get("seed")
    if seed is None:
        raise DatasetError(f"{where}/metadata.json: field 'generator.seed' is missing, so rollouts cannot be replayed")
    env = make(metadata["env_id"], metadata["level"])
    steps = dataset.steps
    episode_ids = steps["episode_id"]
    state, next_state, action = steps["state"].numpy(), steps["next_state"].numpy(), steps["action"].numpy()
    results = []
    for start, end in tqdm(episode_row_ranges(steps), desc=f"check {metadata['env_id']} {metadata['level']}", unit="rollout", disable=not progress):
        episode_id = int(episode_ids[start])
        task = dataset.tasks[int(steps["task_id"][start])]
        states = np.concatenate([state[start:end], next_state[end - 1 : end]])
        observation, info = env.reset(seed=episode_seed(seed, episode_id), options={"task": task})
        instruction = dataset.instruction_texts[int(steps["instruction_id"][start])]
        if np.abs(observation["state"] - states[0]).max() > env.state_tolerance or info["instruction"] != instruction:
            raise DatasetError(f"{where}: episode {episode_id} does not start where seed {seed} puts it, so it cannot be replayed")
        goal_consistent = bool(env.success_flags(states).any())
        per_state = [env.state_violations(s) for s in states[1:]]
        violations = [reason for reasons in per_state for reason in reasons]
        illegal = sum(bool(reasons) for reasons in per_state)
        errors = 0
        for t in range(end - start):
            simulated = env.step(action[start + t])[0]["state"]
            errors += bool(np.abs(simulated - states[t + 1]).max() > env.state_tolerance)
        results.append(RolloutChecks(episode_id, task, end - start, goal_consistent, errors, illegal, violations))
    env.close()
    return results


def failed_checks(checks: RolloutChecks) -> set[str]:
    """Which of :data:`ROLLOUT_CHECKS` a rollout fails."""
    failed = {"goal"} if not checks.goal_consistent else set()
    failed |= {"transitions"} if checks.transition_errors else set()
    return failed | ({"legal"} if checks.illegal_states else set())


def summarize(checks: list[RolloutChecks]) -> dict[str, Any]:
    """Rates over rollouts (consistency), transitions (errors) and generated states (illegal)."""
    steps = sum(c.length for c in checks)
    return {
        "rollouts": len(checks),
        "goal_consistency": sum(c.goal_consistent for c in checks) / len(checks),
        "transition_error_rate": sum(c.transition_errors for c in checks) / steps,
        "illegal_state_rate": sum(c.illegal_states for c in checks) / steps,
        "rollouts_with_transition_error": sum(c.transition_errors > 0 for c in checks) / len(checks),
        "rollouts_with_illegal_state": sum(c.illegal_states > 0 for c in checks) / len(checks),
        "mean_length": steps / len(checks),
        "top_violations": Counter(v.split(" at ")[0] for c in checks for v in c.violations).most_common(5),
    }


def quality_report(dataset: EpisodeDataset, progress: bool = False) -> dict[str, Any]:
    """Per-level summary plus one per task, and each rollout's checks (for filtering)."""
    checks = check_rollouts(dataset, progress)
    per_task = {task: summarize([c for c in checks if c.task == task]) for task in dataset.tasks if any(c.task == task for c in checks)}
    return {
        "env_id": dataset.metadata["env_id"], "level": dataset.metadata["level"], "source": dataset.source,
        "path": str(dataset.path), "overall": summarize(checks), "per_task": per_task,
        "rollouts": [asdict(c) for c in checks],
    }  # fmt: skip


def format_quality_table(reports: list[dict[str, Any]]) -> str:
    header = f"{'level':<10}{'task':<14}{'rollouts':>9}{'consistent':>12}{'trans.err':>11}{'illegal':>9}{'length':>8}"
    lines = [header]
    for report in reports:
        for task, summary in [("all", report["overall"]), *report["per_task"].items()]:
            lines.append(
                f"{report['level']:<10}{task:<14}{summary['rollouts']:>9}{summary['goal_consistency']:>12.1%}"
                f"{summary['transition_error_rate']:>11.1%}{summary['illegal_state_rate']:>9.1%}{summary['mean_length']:>8.1f}"
            )
    return "\n".join(lines)


def write_quality_report(reports: list[dict[str, Any]], path: str | Path) -> None:
    atomic_write_text(json.dumps(reports, indent=1), Path(path))
