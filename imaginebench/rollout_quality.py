"""Automatic quality measures of imaginary rollouts (the ImagineBench paper judged them by hand).

Each rollout is replayed in the simulator from the start state its recorded seed gives:
- goal consistency: the env's success check holds on some generated state;
- clean goal consistency: the goal is reached and no transition went where the simulator would not
  (what the ``goal`` and ``transitions`` filters keep). Goal consistency alone credits rollouts that
  jump to the goal through impossible steps;
- one-step transition error: the simulator, put in the generated s_t (``env.set_state``) and
  stepped with a_t, does not reach the generated s_{t+1} (beyond the env's ``state_tolerance``).
  Each transition is judged on its own, as the paper's 27.1 % are; one that starts from a state
  the env cannot be in counts as an error. Unavailable (``None``, printed "n/a") where the state
  vector does not determine the simulator (``env.state_determines_simulator``: Meta-World, LIBERO);
- drift: a generated next state differs (same tolerance) from the state the simulator reaches
  executing the generated actions open-loop from the start. Once a rollout drifts every later
  step counts, so this is a trajectory-level figure; a rollout drifts exactly when it has a
  one-step error (up to deviations within the tolerance adding up), so the ``transitions``
  filter check reads the drift, which every domain has;
- illegal state: a generated state with no state the env can be in within its ``state_tolerance``
  (``state_violations_within_tolerance``): the tolerance the transition checks allow, so a step they accept
  never lands in an illegal state, and goal consistency counts a goal reached in such a state. A one-step
  check needs the simulator put in s_t exactly, so it counts an s_t outside the exact rules as an error;
- replayed goal consistency: the success check holds on some state the simulator reaches executing the generated
  actions open-loop from the start, i.e. the imagined actions would solve the task, whatever the imagined states say.
  Where the generated states drift, it tells a rollout that reaches its goal through physics the simulator does not
  have (HalfCheetah's imagined jumps) from one whose behaviour is right and whose states are a little off.
Real expert data passes every check, which the tests use as a reference.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
from tqdm.auto import tqdm

from imaginebench.collect import episode_seed
from imaginebench.datasets import DatasetError, EpisodeDataset
from imaginebench.datasets.episodes import episode_row_ranges
from imaginebench.envs.base import ImagineBenchEnv
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
    one_step_errors: int | None
    """``None`` where the env cannot be put in a state (see the module docstring)."""
    drift_errors: int
    illegal_states: int
    violations: list[str] = field(default_factory=list)
    actions_reach_goal: bool | None = None
    """``None`` in reports written before the field existed."""


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
    for start, end in tqdm(
        episode_row_ranges(steps),
        desc=f"check {metadata['env_id']} {metadata['level']}",
        unit="rollout",
        disable=not progress,
    ):
        episode_id = int(episode_ids[start])
        task = dataset.tasks[int(steps["task_id"][start])]
        states, actions = np.concatenate([state[start:end], next_state[end - 1 : end]]), action[start:end]
        observation, info = env.reset(seed=episode_seed(seed, episode_id), options={"task": task})
        instruction = dataset.instruction_texts[int(steps["instruction_id"][start])]
        if _differs(env, observation["state"], states[0]) or info["instruction"] != instruction:
            raise DatasetError(
                f"{where}: episode {episode_id} does not start where seed {seed} puts it, so it cannot be replayed"
            )
        per_state = [env.state_violations_within_tolerance(s) for s in states]
        goal_consistent = bool(env.success_flags(states, np.array([not reasons for reasons in per_state])).any())
        violations = [reason for reasons in per_state[1:] for reason in reasons]
        illegal = sum(bool(reasons) for reasons in per_state[1:])
        replayed = replay(env, observation["state"], actions)
        drift = sum(_differs(env, simulated, generated) for simulated, generated in zip(replayed[1:], states[1:]))
        one_step = (
            one_step_errors(env, states, actions, [not env.state_violations(s) for s in states])
            if env.state_determines_simulator
            else None
        )
        results.append(
            RolloutChecks(
                episode_id,
                task,
                end - start,
                goal_consistent,
                one_step,
                drift,
                illegal,
                violations,
                actions_reach_goal=bool(env.success_flags(replayed).any()),
            )
        )
    env.close()
    return results


def replay(env: ImagineBenchEnv, reset_state: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """``reset_state`` (the state the env was just reset to), then the states the simulator reaches executing
    ``actions`` open-loop from it. Drift compares them with the generated ones."""
    return np.stack([reset_state, *(env.step(a)[0]["state"] for a in actions)])


def one_step_errors(env: ImagineBenchEnv, states: np.ndarray, actions: np.ndarray, legal: list[bool]) -> int:
    """Transitions ``states[t], actions[t] → states[t + 1]`` the simulator does not make, each
    started from the generated ``states[t]``; one from a state that is not ``legal`` is an error."""
    return sum(one_step_wrong(env, states, actions, legal))


def one_step_wrong(env: ImagineBenchEnv, states: np.ndarray, actions: np.ndarray, legal: list[bool]) -> list[bool]:
    """Per transition, whether it is one of :func:`one_step_errors`."""
    return [
        deviation is None or bool(deviation.max() > env.state_tolerance)
        for deviation in one_step_deviations(env, states, actions, legal)
    ]


def one_step_deviations(
    env: ImagineBenchEnv, states: np.ndarray, actions: np.ndarray, legal: list[bool]
) -> list[np.ndarray | None]:
    """Per transition, ``|simulated − generated|`` of the next state, the simulator started from the generated
    ``states[t]``; ``None`` where that state is not ``legal`` (the simulator cannot be put there)."""
    return [
        None if simulated is None else np.abs(simulated - states[t + 1])
        for t, simulated in enumerate(one_step_simulations(env, states, actions, legal))
    ]


def one_step_simulations(
    env: ImagineBenchEnv, states: np.ndarray, actions: np.ndarray, legal: list[bool]
) -> Iterator[np.ndarray | None]:
    """Per transition, lazily, the next state the simulator reaches from the generated ``states[t]`` with
    ``actions[t]``; ``None`` where that state is not ``legal``. A reader that stops early steps no further."""
    for t, action in enumerate(actions):
        if not legal[t]:
            yield None
            continue
        env.set_state(states[t])
        yield env.step(action)[0]["state"]


def _differs(env: ImagineBenchEnv, simulated: np.ndarray, generated: np.ndarray) -> bool:
    return bool(np.abs(simulated - generated).max() > env.state_tolerance)


def failed_checks(checks: RolloutChecks) -> set[str]:
    """Which of :data:`ROLLOUT_CHECKS` a rollout fails."""
    failed = {"goal"} if not checks.goal_consistent else set()
    failed |= {"transitions"} if checks.drift_errors else set()
    return failed | ({"legal"} if checks.illegal_states else set())


def summarize(checks: list[RolloutChecks]) -> dict[str, Any]:
    """Rates over rollouts (consistency), transitions (errors) and generated states (illegal);
    the one-step figures are ``None`` where the env cannot check them."""
    steps = sum(c.length for c in checks)
    one_step = None if any(c.one_step_errors is None for c in checks) else [c.one_step_errors for c in checks]
    replayed = [c.actions_reach_goal for c in checks]
    return {
        "rollouts": len(checks),
        "goal_consistency": sum(c.goal_consistent for c in checks) / len(checks),
        "clean_goal_consistency": sum(not failed_checks(c) & {"goal", "transitions"} for c in checks) / len(checks),
        "replayed_goal_consistency": None if None in replayed else sum(replayed) / len(checks),
        "one_step_error_rate": None if one_step is None else sum(one_step) / steps,
        "drift_error_rate": sum(c.drift_errors for c in checks) / steps,
        "illegal_state_rate": sum(c.illegal_states for c in checks) / steps,
        "rollouts_with_one_step_error": None if one_step is None else sum(e > 0 for e in one_step) / len(checks),
        "rollouts_with_drift": sum(c.drift_errors > 0 for c in checks) / len(checks),
        "rollouts_with_illegal_state": sum(c.illegal_states > 0 for c in checks) / len(checks),
        "mean_length": steps / len(checks),
        "top_violations": Counter(v.split(" at ")[0] for c in checks for v in c.violations).most_common(5),
    }


def quality_report(dataset: EpisodeDataset, progress: bool = False) -> dict[str, Any]:
    """Per-level summary plus one per task, and each rollout's checks (for filtering)."""
    if dataset.num_steps == 0:
        raise DatasetError(f"{dataset.path or 'dataset'}: has no episodes, so there is no quality to report")
    checks = check_rollouts(dataset, progress)
    per_task = {
        task: summarize([c for c in checks if c.task == task])
        for task in dataset.tasks
        if any(c.task == task for c in checks)
    }
    return {
        "env_id": dataset.metadata["env_id"],
        "level": dataset.metadata["level"],
        "source": dataset.source,
        "path": str(dataset.path),
        "overall": summarize(checks),
        "per_task": per_task,
        "rollouts": [asdict(c) for c in checks],
    }


def format_quality_table(reports: list[dict[str, Any]]) -> str:
    """Per level and task: consistency (of the generated states, clean, of the replayed actions), one-step and drift
    error rates per step, illegal states."""
    header = f"{'level':<10}{'task':<14}{'rollouts':>9}{'consistent':>12}{'clean':>8}{'replayed':>10}{'one-step':>10}{'drift':>8}{'illegal':>9}{'length':>8}"
    lines = [header]
    for report in reports:
        for task, summary in [("all", report["overall"]), *report["per_task"].items()]:
            lines.append(
                f"{report['level']:<10}{task:<14}{summary['rollouts']:>9}{summary['goal_consistency']:>12.1%}"
                f"{summary['clean_goal_consistency']:>8.1%}{_percent(summary.get('replayed_goal_consistency')):>10}"
                f"{_percent(summary['one_step_error_rate']):>10}{summary['drift_error_rate']:>8.1%}"
                f"{summary['illegal_state_rate']:>9.1%}{summary['mean_length']:>8.1f}"
            )
    return "\n".join(lines)


def _percent(rate: float | None) -> str:
    return "n/a" if rate is None else f"{rate:.1%}"


def write_quality_report(reports: list[dict[str, Any]], path: str | Path) -> None:
    atomic_write_text(json.dumps(reports, indent=1), Path(path))
