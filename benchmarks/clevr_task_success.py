"""Expert and uniformly-random success per Ball-v0 (CLEVR-Robot) task and level, and push speed.

    .venv/bin/python benchmarks/clevr_task_success.py --episodes 200 --seed 0

Same protocol as ``babyai_task_success.py`` (reset seed ``seed + k``, random actions from a
generator seeded with ``(seed, k)``), plus env steps per second with each policy.
"""

from __future__ import annotations

import argparse
import time

from policy_rollouts import (
    discrete_expert_and_random,
    measure_task,
)  # benchmarks/ is on sys.path when a script in it runs

import imaginebench
from imaginebench.envs.clevr import DOMAIN
from imaginebench.envs.clevr.tasks import TASKS

POLICIES = discrete_expert_and_random(DOMAIN)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=100, help="episodes per task and policy")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--levels", nargs="+", default=list(imaginebench.LEVELS), choices=imaginebench.LEVELS)
    args = parser.parse_args()
    print(f"Ball-v0, {args.episodes} episodes per task and policy, seed {args.seed}")
    print(
        f"{'level':<10}{'task':<17}{'horizon':>8}{'instr.':>7}{'expert':>8}{'exp.len':>8}{'exp.st/s':>9}{'random':>8}{'rnd.len':>8}{'rnd.st/s':>9}"
    )
    start = time.perf_counter()
    for level in args.levels:
        n_texts = len(DOMAIN.instruction_texts(level))
        for task in DOMAIN.tasks[level]:
            r = measure_task(DOMAIN.env_id, level, task, POLICIES, args.episodes, args.seed)
            (exp_sr, exp_len, exp_speed), (rnd_sr, rnd_len, rnd_speed) = r["expert"], r["random"]
            print(
                f"{level:<10}{task:<17}{TASKS[task].horizon:>8}{n_texts:>7}{exp_sr:>8.1%}{exp_len:>8.1f}{exp_speed:>9.0f}{rnd_sr:>8.1%}{rnd_len:>8.1f}{rnd_speed:>9.0f}",
                flush=True,
            )
    print(f"took {time.perf_counter() - start:.1f} s (st/s: env steps per second of wall time, policy included)")


if __name__ == "__main__":
    main()
