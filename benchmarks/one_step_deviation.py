"""How far imagined transitions land from the simulator's, not only whether they land within the tolerance.

``rollout-quality`` counts a one-step error when ``s_t, a_t → s_{t+1}`` misses the simulator's next state by more
than the env's ``state_tolerance``; on continuous domains nearly every imagined transition does, and the rate
alone cannot say whether the model is close or lost. This replays each transition that starts from a legal
state (as the one-step check does) and prints the size of the miss: quantiles of the largest deviation per
transition, the share within a few thresholds, and the median deviation per state dimension beside that
dimension's spread in the dataset itself.

    .venv/bin/python benchmarks/one_step_deviation.py data/Mujoco-v0/imaginary-rephrase [--rollouts 40]
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from imaginebench.datasets import load_episodes
from imaginebench.datasets.episodes import episode_row_ranges
from imaginebench.registry import make
from imaginebench.rollout_quality import one_step_deviations

THRESHOLDS = (0.01, 0.05, 0.1, 0.5)


def deviations(path: str, rollouts: int) -> tuple[np.ndarray, int, np.ndarray]:
    """``(|simulated − generated| per replayed transition and dimension, transitions skipped as illegal,
    the dataset's per-dimension standard deviation)`` over the first ``rollouts`` rollouts."""
    dataset = load_episodes(path)
    env = make(dataset.metadata["env_id"], dataset.metadata["level"])
    if not env.state_determines_simulator:
        raise SystemExit(
            f"{path}: {env.env_id}'s state vector does not set its simulator, so there is no one-step replay"
        )
    steps = dataset.steps
    state, next_state, action = steps["state"].numpy(), steps["next_state"].numpy(), steps["action"].numpy()
    env.reset(seed=0)  # set_state needs a reset env
    replayed: list[np.ndarray | None] = []
    for start, end in episode_row_ranges(steps)[:rollouts]:
        states = np.concatenate([state[start:end], next_state[end - 1 : end]])
        legal = [not env.state_violations(s) for s in states[:-1]]
        replayed += one_step_deviations(env, states, action[start:end], legal)
    env.close()
    rows = [deviation for deviation in replayed if deviation is not None]
    return np.array(rows), len(replayed) - len(rows), state.std(0)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset")
    parser.add_argument("--rollouts", type=int, default=40, help="rollouts replayed (the first ones)")
    args = parser.parse_args(argv)
    per_dimension, skipped, spread = deviations(args.dataset, args.rollouts)
    if not len(per_dimension):
        raise SystemExit(f"{args.dataset}: no transition starts from a legal state")
    largest = per_dimension.max(1)
    print(f"{args.dataset}: {len(largest)} transitions replayed, {skipped} skipped (illegal start)")
    print(
        "largest deviation per transition, quantiles 10 / 50 / 90 %:",
        np.round(np.quantile(largest, [0.1, 0.5, 0.9]), 3),
    )
    print(
        "share within " + " / ".join(map(str, THRESHOLDS)) + ":",
        [round(float((largest <= x).mean()), 3) for x in THRESHOLDS],
    )
    print("median deviation per dimension:", np.round(np.median(per_dimension, 0), 3))
    print("the dataset's standard deviation per dimension:", np.round(spread, 3))


if __name__ == "__main__":
    main(sys.argv[1:])
