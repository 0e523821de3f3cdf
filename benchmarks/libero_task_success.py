"""Expert and uniformly-random success per Libero-v0 task and level, episode length and speed.

    MUJOCO_GL=egl .venv-libero/bin/python benchmarks/libero_task_success.py --episodes 10 --random-episodes 4

Same protocol as the other ``*_task_success.py`` (reset seed ``seed + k``, random actions from a
generator seeded with ``(seed, k)``). A random episode runs the full 500-step horizon (~15 s on a
loaded CPU), so it gets its own, smaller count. Rephrase repeats the train tasks with other
instructions and neither policy reads instructions, so its rows repeat the train figures.
"""

from __future__ import annotations

import argparse
import time
from typing import Callable

import numpy as np

from imaginebench.envs.libero import DOMAIN

from policy_rollouts import PolicyFactory, measure_every_task  # benchmarks/ is on sys.path when a script in it runs


def random_policy(seed: int, episode: int) -> Callable:
    rng = np.random.default_rng([seed, episode])
    return lambda _env: rng.uniform(-1.0, 1.0, 7).astype(np.float32)


POLICIES: dict[str, PolicyFactory] = {"expert": lambda _seed, _episode: DOMAIN.expert(), "random": random_policy}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=10, help="expert episodes per task")
    parser.add_argument("--random-episodes", type=int, default=4, help="random-policy episodes per task")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"Libero-v0, {args.episodes} expert / {args.random_episodes} random episodes per task, seed {args.seed}")
    print(f"{'level':<10}{'task':<46}{'expert':>8}{'exp. len':>9}{'random':>8}{'rand. len':>10}{'steps/s':>9}")
    start = time.perf_counter()
    measured: dict[str, dict] = {}
    episodes = {"expert": args.episodes, "random": args.random_episodes}
    for level, task, r in measure_every_task(DOMAIN, POLICIES, episodes, args.seed):  # every Libero-v0 env of a process shares one simulator
        measured[task] = r
        (exp_sr, exp_len, exp_speed), (rnd_sr, rnd_len, _) = r["expert"], r["random"]
        print(f"{level:<10}{task:<46}{exp_sr:>8.0%}{exp_len:>9.1f}{rnd_sr:>8.0%}{rnd_len:>10.1f}{exp_speed:>9.0f}", flush=True)
    print(f"lowest expert success {min(r['expert'][0] for r in measured.values()):.0%} (need >= 90%); highest random {max(r['random'][0] for r in measured.values()):.0%} (need <= 20%)")
    print(f"took {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
