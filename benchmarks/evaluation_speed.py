"""Wall time of one level's evaluation with its envs stepped in this process and in N workers, in the same run.

    .venv/bin/python benchmarks/evaluation_speed.py --env MetaWorld-v0 --level train --episodes-per-task 10

Both evaluations run the same seeded random policy from the same seeds and must give the same
result (the run fails otherwise). The level's instructions are encoded and its domain imported
before either is timed; the N workers' time includes their start-up (each imports torch and the
simulator, a few seconds), as it does at every evaluation during training. Run it on an otherwise
idle machine: on a shared CPU the other jobs take the cores the workers are meant to have.
"""

from __future__ import annotations

import argparse
import time

import torch

from imaginebench.evaluation import ActFn, LevelResult, evaluate_level
from imaginebench.processes import available_cores
from imaginebench.registry import get_domain, instruction_table


def random_policy(env_id: str, seed: int) -> ActFn:
    """Uniform random actions from a generator of its own, so two evaluations draw the same ones."""
    domain = get_domain(env_id)
    generator = torch.Generator().manual_seed(seed)

    def act(state: torch.Tensor, instruction_embedding: torch.Tensor) -> torch.Tensor:
        if domain.action_kind == "discrete":
            return torch.randint(domain.num_actions, (len(state),), generator=generator)
        return torch.rand((len(state), domain.action_dim), generator=generator) * 2 - 1

    return act


def timed_evaluation(args: argparse.Namespace, workers: int) -> tuple[float, LevelResult]:
    """Seconds to evaluate the level with ``workers`` processes, and the result."""
    start = time.perf_counter()
    result = evaluate_level(
        random_policy(args.env, args.seed), args.env, args.level, args.episodes_per_task, args.seed, workers=workers
    )
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="MetaWorld-v0")
    parser.add_argument("--level", default="train")
    parser.add_argument(
        "--episodes-per-task", type=int, default=10, help="default: the shipped configs' Meta-World value"
    )
    parser.add_argument("--seed", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=available_cores(), help="N (default: all cores)")
    args = parser.parse_args()
    instruction_table(args.env, args.level)
    one, in_process = timed_evaluation(args, workers=1)
    many, in_workers = timed_evaluation(args, workers=args.workers)
    if in_workers != in_process:
        raise SystemExit(f"the {args.workers}-worker evaluation differs from the in-process one")
    envs = len(get_domain(args.env).tasks[args.level]) * args.episodes_per_task
    print(f"{args.env} {args.level}: {envs} episodes at once, success {in_process.success_rate:.1%}; identical results")
    print(f"in process: {one:8.2f} s")
    print(f"{args.workers} workers: {many:8.2f} s")
    print(f"speed-up:   {one / many:8.2f}x")


if __name__ == "__main__":
    main()
