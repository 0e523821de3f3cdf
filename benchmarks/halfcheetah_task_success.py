"""Expert, uniformly random and zero-action success per Mujoco-v0 (HalfCheetah) task and level.

    .venv/bin/python benchmarks/halfcheetah_task_success.py --episodes 50 --seed 0

Same protocol as the other ``*_task_success.py`` benchmarks (reset seed ``seed + k``, random
actions from a generator seeded with ``(seed, k)``). Rephrase has the train tasks with other
instructions, and no policy here reads instructions, so its rows repeat the train figures.
docs/original-benchmark.md#what-we-require-of-every-domain asks for every expert >= 90 % and random (and zero) actions <= 20 % on every task.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
from policy_rollouts import PolicyFactory, measure_every_task  # benchmarks/ is on sys.path when a script in it runs

from imaginebench.envs.halfcheetah import DOMAIN


def random_policy(seed: int, episode: int) -> Callable:
    rng = np.random.default_rng([seed, episode])
    return lambda _env: rng.uniform(-1.0, 1.0, 6).astype(np.float32)


POLICIES: dict[str, PolicyFactory] = {
    "expert": lambda _seed, _episode: DOMAIN.expert(),
    "random": random_policy,
    "zero": lambda _seed, _episode: lambda _env: np.zeros(6, dtype=np.float32),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=50, help="episodes per task and policy")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"Mujoco-v0, {args.episodes} episodes per task and policy, seed {args.seed}")
    print(f"{'level':<10}{'task':<24}{'expert':>8}{'exp. len':>9}{'random':>8}{'zero':>8}{'steps/s':>9}")
    start = time.perf_counter()
    measured: dict[str, dict] = {}
    for level, task, r in measure_every_task(DOMAIN, POLICIES, args.episodes, args.seed):
        measured[task] = r
        (exp_sr, exp_len, exp_speed), rnd, zero = r["expert"], r["random"], r["zero"]
        print(
            f"{level:<10}{task:<24}{exp_sr:>8.0%}{exp_len:>9.1f}{rnd[0]:>8.0%}{zero[0]:>8.0%}{exp_speed:>9.0f}",
            flush=True,
        )
    worst_expert = min(r["expert"][0] for r in measured.values())
    worst_chance = max(max(r["random"][0], r["zero"][0]) for r in measured.values())
    print(
        f"lowest expert success {worst_expert:.0%} (need >= 90%); highest random/zero success {worst_chance:.0%} (need <= 20%)"
    )
    print(f"took {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
