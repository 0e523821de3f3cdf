"""Expert and uniformly-random success per Ball-v0 (CLEVR-Robot) task and level, and push speed.

    .venv/bin/python benchmarks/clevr_task_success.py --episodes 100 --seed 0

Episode ``k`` of every task uses reset seed ``seed + k``; the random policy draws its actions from
its own generator seeded with ``(seed, k)``, so the table is reproducible.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import imaginebench
from imaginebench.envs.clevr import DOMAIN, HORIZON


def run_episode(env, policy) -> tuple[bool, int]:
    """Play from the state the last ``reset`` produced until the episode ends."""
    steps, done, info = 0, False, {"is_success": False}
    while not done:
        _, _, terminated, truncated, info = env.step(policy(env))
        steps, done = steps + 1, terminated or truncated
    return bool(info["is_success"]), steps


def success_rates(level: str, task: str, episodes: int, seed: int) -> dict[str, tuple[float, float, float]]:
    """policy → (success rate, mean length, pushes per second of wall time incl. the policy)."""
    env = imaginebench.make(DOMAIN.env_id, level=level, task=task)
    results = {}
    for name in ("expert", "random"):
        successes, lengths = [], []
        start = time.perf_counter()
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
        results[name] = (float(np.mean(successes)), float(np.mean(lengths)), sum(lengths) / (time.perf_counter() - start))
    env.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=100, help="episodes per task and policy")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"Ball-v0, horizon {HORIZON}, {args.episodes} episodes per task and policy, seed {args.seed}")
    print(f"{'level':<10}{'task':<17}{'instr.':>7}{'expert':>8}{'exp.len':>8}{'exp.st/s':>9}{'random':>8}{'rnd.len':>8}{'rnd.st/s':>9}")
    start = time.perf_counter()
    for level in imaginebench.LEVELS:
        n_texts = len(DOMAIN.instruction_texts(level))
        for task in DOMAIN.tasks[level]:
            r = success_rates(level, task, args.episodes, args.seed)
            (exp_sr, exp_len, exp_speed), (rnd_sr, rnd_len, rnd_speed) = r["expert"], r["random"]
            print(f"{level:<10}{task:<17}{n_texts:>7}{exp_sr:>8.1%}{exp_len:>8.1f}{exp_speed:>9.0f}{rnd_sr:>8.1%}{rnd_len:>8.1f}{rnd_speed:>9.0f}", flush=True)
    print(f"took {time.perf_counter() - start:.1f} s (st/s: env steps per second of wall time, policy included)")


if __name__ == "__main__":
    main()
