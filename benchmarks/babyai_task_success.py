"""Expert and uniformly-random success per BabyAI task and level (spec §12: expert >= 90 %, random <= 20 %).

    .venv/bin/python benchmarks/babyai_task_success.py --episodes 200 --seed 0

Episode ``k`` of every task uses reset seed ``seed + k``; the random policy draws its actions from
its own generator seeded with ``(seed, k)``, so the table is reproducible.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import imaginebench
from imaginebench.envs.babyai import DOMAIN, HORIZON


def run_episode(env, policy) -> tuple[bool, int]:
    """Play from the state the last ``reset`` produced until the episode ends."""
    steps, done, info = 0, False, {"is_success": False}
    while not done:
        _, _, terminated, truncated, info = env.step(policy(env))
        steps, done = steps + 1, terminated or truncated
    return bool(info["is_success"]), steps


def success_rates(level: str, task: str, episodes: int, seed: int) -> dict[str, tuple[float, float]]:
    env = imaginebench.make(DOMAIN.env_id, level=level, task=task)
    results = {}
    for name in ("expert", "random"):
        successes, lengths = [], []
        for k in range(episodes):
            env.reset(seed=seed + k)
            if name == "expert":
                policy = DOMAIN.expert()
            else:
                rng = np.random.default_rng([seed, k])
                policy = lambda _env, rng=rng: int(rng.integers(DOMAIN.num_actions))  # noqa: E731
            success, steps = run_episode(env, policy)
            successes.append(success)
            lengths.append(steps)
        results[name] = (float(np.mean(successes)), float(np.mean(lengths)))
    env.close()
    return results


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
            r = success_rates(level, task, args.episodes, args.seed)
            (exp_sr, exp_len), (rnd_sr, rnd_len) = r["expert"], r["random"]
            worst_expert, worst_random = min(worst_expert, exp_sr), max(worst_random, rnd_sr)
            print(f"{level:<10}{task:<10}{n_texts:>13}{exp_sr:>9.1%}{exp_len:>9.1f}{rnd_sr:>9.1%}{rnd_len:>10.1f}")
    print(f"lowest expert success {worst_expert:.1%} (need >= 90%), highest random success {worst_random:.1%} (need <= 20%)")
    print(f"took {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
