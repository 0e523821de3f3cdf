"""Expert, uniformly-random and (continuous actions) zero-action success per task and level of one domain, and
env steps per second: what docs/original-benchmark.md#what-we-require-of-every-domain asks of every domain
(expert >= 90 %, random and zero actions <= 20 % on every task).

    .venv/bin/python benchmarks/task_success.py --env BabyAI-v0 --episodes 200 --seed 0
    .venv/bin/python benchmarks/task_success.py --env Libero-v0 --episodes expert=5 random=3 zero=2

Episode ``k`` of every task uses reset seed ``seed + k``; a random policy draws from its own generator seeded
with ``(seed, k)``, so the table is reproducible. A task shared by train and rephrase is played once.
"""

from __future__ import annotations

import argparse
import time
import warnings

from policy_rollouts import domain_policies, measure_every_task  # benchmarks/ is on sys.path when a script in it runs

from imaginebench.registry import env_ids, get_domain


def episode_counts(words: list[str], policies: list[str]) -> dict[str, int]:
    """``["50"]`` → 50 for every policy; ``["expert=5", "random=3"]`` → per policy (others 0)."""
    if len(words) == 1 and "=" not in words[0]:
        return dict.fromkeys(policies, int(words[0]))
    counts = dict.fromkeys(policies, 0)
    for word in words:
        name, _, count = word.partition("=")
        if name not in counts:
            raise SystemExit(f"--episodes: unknown policy {name!r}; policies: {', '.join(policies)}")
        counts[name] = int(count)
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", required=True, choices=env_ids())
    parser.add_argument(
        "--episodes", nargs="+", default=["50"], help="per task and policy: N, or expert=N random=M ..."
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tasks", nargs="*", default=(), help="measure only these tasks (default: every task)")
    args = parser.parse_args()
    warnings.filterwarnings("ignore", message="Constant")  # Meta-World's package warns about its own gains
    domain = get_domain(args.env)
    policies = domain_policies(domain)
    counts = episode_counts(args.episodes, list(policies))
    print(f"{args.env}, episodes per task: {counts}, seed {args.seed}")
    columns = "".join(f"{name:>9}{'len':>7}" for name in policies)
    print(f"{'level':<10}{'task':<40}{'instr.':>7}{columns}{'steps/s':>9}{'seconds':>9}")
    start = time.perf_counter()
    measured: dict[str, dict] = {}
    for level, task, result in measure_every_task(domain, policies, counts, args.seed, args.tasks):
        measured[task] = result
        cells = "".join(f"{result[name][0]:>9.1%}{result[name][1]:>7.1f}" for name in policies)
        texts = len(domain.instruction_texts(level))
        print(
            f"{level:<10}{task:<40}{texts:>7}{cells}{result['expert'][2]:>9.0f}{time.perf_counter() - start:>9.0f}",
            flush=True,
        )
    worst_expert = min(result["expert"][0] for result in measured.values())
    chance = [result[name][0] for result in measured.values() for name in policies if name != "expert"]
    print(
        f"lowest expert success {worst_expert:.1%} (need >= 90%); highest chance success {max(chance):.1%} (need <= 20%)"
    )
    print(f"took {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
