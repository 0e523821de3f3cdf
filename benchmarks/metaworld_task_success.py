"""Expert and uniformly-random success per MetaWorld-v0 task and level, episode length and speed.

    .venv/bin/python benchmarks/metaworld_task_success.py --episodes 50 --seed 0

Same protocol as ``babyai_task_success.py`` (reset seed ``seed + k``, random actions from a
generator seeded with ``(seed, k)``). Rephrase has the train tasks with other instructions, and
neither policy reads instructions, so its rows repeat the train figures instead of rerunning them.
Steps per second include the policy and the state layout (measured on whatever else shares the CPU).
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Callable

import numpy as np
from policy_rollouts import PolicyFactory, measure_every_task  # benchmarks/ is on sys.path when a script in it runs

from imaginebench.envs.metaworld import DOMAIN, TASKS
from imaginebench.envs.metaworld.distractors import distractor_bank
from imaginebench.envs.metaworld.layout import ENTITIES


def random_policy(seed: int, episode: int) -> Callable:
    rng = np.random.default_rng([seed, episode])
    return lambda _env: rng.uniform(-1.0, 1.0, 4).astype(np.float32)


POLICIES: dict[str, PolicyFactory] = {"expert": lambda _seed, _episode: DOMAIN.expert(), "random": random_policy}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=50, help="episodes per task and policy")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    warnings.filterwarnings("ignore", message="Constant")  # the package's policies warn about their own gains
    print(f"MetaWorld-v0, {args.episodes} episodes per task and policy, seed {args.seed}")
    start = time.perf_counter()
    for entity in ENTITIES:  # built once per process; keep it out of the steps/s figures
        distractor_bank(entity)
    print(f"distractor banks built in {time.perf_counter() - start:.1f} s")
    print(
        f"{'level':<10}{'task':<18}{'horizon':>8}{'expert':>8}{'exp. len':>9}{'random':>8}{'rand. len':>10}{'steps/s':>9}"
    )
    start = time.perf_counter()
    measured: dict[str, dict] = {}
    for level, task, r in measure_every_task(DOMAIN, POLICIES, args.episodes, args.seed):
        measured[task] = r
        (exp_sr, exp_len, exp_speed), (rnd_sr, rnd_len, _) = r["expert"], r["random"]
        print(
            f"{level:<10}{task:<18}{TASKS[task].horizon:>8}{exp_sr:>8.0%}{exp_len:>9.1f}{rnd_sr:>8.0%}{rnd_len:>10.1f}{exp_speed:>9.0f}",
            flush=True,
        )
    train = [measured[task]["expert"][0] for task in DOMAIN.tasks["train"]]
    print(f"lowest train-level expert success {min(train):.0%} (need >= 90%)")
    print(f"took {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
