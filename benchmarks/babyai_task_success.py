"""Expert and uniformly-random success per BabyAI task and level (docs/original-benchmark.md#what-we-require-of-every-domain: expert >= 90 %, random <= 20 %).

    .venv/bin/python benchmarks/babyai_task_success.py --episodes 200 --seed 0

Episode ``k`` of every task uses reset seed ``seed + k``; the random policy draws its actions from
its own generator seeded with ``(seed, k)``, so the table is reproducible.
"""

from __future__ import annotations

import argparse
import time

from policy_rollouts import (
    discrete_expert_and_random,
    measure_task,
)  # benchmarks/ is on sys.path when a script in it runs

import imaginebench
from imaginebench.envs.babyai import DOMAIN, HORIZON

POLICIES = discrete_expert_and_random(DOMAIN)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=200, help="episodes per task and policy")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"BabyAI-v0, horizon {HORIZON}, {args.episodes} episodes per task and policy, seed {args.seed}")
    print(f"{'level':<10}{'task':<10}{'instructions':>13}{'expert':>9}{'exp. len':>9}{'random':>9}{'rand. len':>10}")
    start = time.perf_counter()
    worst_expert, worst_random = 1.0, 0.0
    for level in imaginebench.LEVELS:
        n_texts = len(DOMAIN.instruction_texts(level))
        for task in DOMAIN.tasks[level]:
            r = measure_task(DOMAIN.env_id, level, task, POLICIES, args.episodes, args.seed)
            (exp_sr, exp_len, _), (rnd_sr, rnd_len, _) = r["expert"], r["random"]
            worst_expert, worst_random = min(worst_expert, exp_sr), max(worst_random, rnd_sr)
            print(f"{level:<10}{task:<10}{n_texts:>13}{exp_sr:>9.1%}{exp_len:>9.1f}{rnd_sr:>9.1%}{rnd_len:>10.1f}")
    print(
        f"lowest expert success {worst_expert:.1%} (need >= 90%), highest random success {worst_random:.1%} (need <= 20%)"
    )
    print(f"took {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
