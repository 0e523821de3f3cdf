"""Where imagined rollouts first go wrong: per task, the most common first wrong transition.

``rollout-quality`` says how many transitions are wrong; this says which. For each rollout it finds the first
transition ``s_t, a_t → s_{t+1}`` the simulator, put in the generated ``s_t``, does not make (or the first that
starts from an illegal state), and counts it by task, action and the dimensions that differ, with the generated
and simulated values. A rule the real data never show (BabyAI's locked door, opened without its key) stands out
as one row holding most of a task's rollouts.

    .venv/bin/python benchmarks/first_transition_errors.py data/BabyAI-v0/imaginary-hard [--top 5] [--fields-only]
"""

from __future__ import annotations

import argparse
from collections import Counter, defaultdict

import numpy as np

from imaginebench.collect import episode_seed
from imaginebench.datasets import load_episodes
from imaginebench.datasets.episodes import episode_row_ranges
from imaginebench.registry import make
from imaginebench.rollout_quality import one_step_simulations

ILLEGAL = "starts from an illegal state"


def first_errors(path: str, values: bool = True) -> tuple[dict[str, Counter], Counter]:
    """``({task: Counter(first error description)}, Counter(task → rollouts))`` over every rollout of ``path``;
    without ``values`` an error is described by its action and the dimensions that differ only."""
    dataset = load_episodes(path)
    metadata = dataset.metadata
    env = make(metadata["env_id"], metadata["level"])
    if not env.state_determines_simulator:
        raise SystemExit(
            f"{path}: {env.env_id}'s state vector does not set its simulator, so there is no one-step replay"
        )
    names = env.unwrapped.state_fields or tuple(str(i) for i in range(env.state_space.shape[0]))
    steps = dataset.steps
    state, next_state, action = steps["state"].numpy(), steps["next_state"].numpy(), steps["action"].numpy()
    seed = metadata["generator"]["seed"]
    errors: dict[str, Counter] = defaultdict(Counter)
    rollouts: Counter = Counter()
    for start, end in episode_row_ranges(steps):
        task = dataset.tasks[int(steps["task_id"][start])]
        rollouts[task] += 1
        states = np.concatenate([state[start:end], next_state[end - 1 : end]])
        env.reset(seed=episode_seed(seed, int(steps["episode_id"][start])), options={"task": task})
        legal = [not env.state_violations(s) for s in states]
        for t, simulated in enumerate(one_step_simulations(env, states, action[start:end], legal)):
            if simulated is None:
                errors[task][ILLEGAL] += 1
                break
            wrong = np.flatnonzero(np.abs(simulated - states[t + 1]) > env.state_tolerance)
            if len(wrong):
                changes = ", ".join(
                    f"{names[i]} {states[t][i]:g}→{states[t + 1][i]:g} (simulator {simulated[i]:g})"
                    if values
                    else names[i]
                    for i in wrong
                )
                errors[task][f"action {np.asarray(action[start + t]).tolist()}: {changes}"] += 1
                break
    env.close()
    return errors, rollouts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", help="an imaginary dataset directory")
    parser.add_argument("--top", type=int, default=5, help="first errors printed per task")
    parser.add_argument("--fields-only", action="store_true", help="group errors by action and dimensions, not values")
    args = parser.parse_args()
    errors, rollouts = first_errors(args.path, values=not args.fields_only)
    for task, count in rollouts.items():
        wrong = sum(errors[task].values())
        print(f"{task}: {wrong} of {count} rollouts have a wrong transition; the first one is")
        for description, n in errors[task].most_common(args.top):
            print(f"  {n:5d}  {description}")


if __name__ == "__main__":
    main()
