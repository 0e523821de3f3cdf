"""Wall time of evaluating every level with the envs stepped in this process and in N workers, in the same run.

    .venv/bin/python benchmarks/evaluation_speed.py --env MetaWorld-v0 --episodes-per-task 10 [--out F.json]

As the evaluation callback does, all levels step in one vector env that is built once and kept:
each setting is timed for its first evaluation (building the simulators and, with N, starting the
workers) and for a second one on the kept envs (what every later evaluation during training
costs). Both settings run the same seeded random policy from the same seeds and must give the same
result (the run fails otherwise). The levels' instructions are encoded and the domain imported
before anything is timed. Run it on an otherwise idle machine: on a shared CPU the other jobs take
the cores the workers are meant to have.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch
from parallel_figures import write_parallel_figures

from imaginebench.evaluation import ActFn, EvaluationEnvs, LevelResult
from imaginebench.levels import LEVELS
from imaginebench.processes import available_cores
from imaginebench.registry import get_domain, instruction_table


def random_policy(env_id: str, seed: int) -> ActFn:
    """Uniform random actions from a generator of its own, so two evaluations draw the same ones (the
    sub-envs are in the same order with and without workers)."""
    domain = get_domain(env_id)
    generator = torch.Generator().manual_seed(seed)

    def act(state: torch.Tensor, instruction_embedding: torch.Tensor) -> torch.Tensor:
        if domain.action_kind == "discrete":
            return torch.randint(domain.num_actions, (len(state),), generator=generator)
        return torch.rand((len(state), domain.action_dim), generator=generator) * 2 - 1

    return act


def timed_evaluations(args: argparse.Namespace, workers: int) -> tuple[float, float, dict[str, LevelResult]]:
    """Seconds of the first evaluation (envs built inside it) and of a second one on the kept envs."""
    start = time.perf_counter()
    with EvaluationEnvs(args.env, args.levels, args.episodes_per_task, workers=workers) as envs:
        first_results = envs.evaluate(random_policy(args.env, args.seed), args.seed)
        first = time.perf_counter() - start
        start = time.perf_counter()
        results = envs.evaluate(random_policy(args.env, args.seed), args.seed)
        again = time.perf_counter() - start
    if results != first_results:
        raise SystemExit(f"{workers} workers: the second evaluation on the kept envs differs from the first")
    return first, again, results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="MetaWorld-v0")
    parser.add_argument("--levels", nargs="+", default=list(LEVELS))
    parser.add_argument(
        "--episodes-per-task", type=int, default=10, help="default: the shipped configs' Meta-World value"
    )
    parser.add_argument("--seed", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=available_cores(), help="N (default: all cores)")
    parser.add_argument("--out", type=Path, help="also write the figures as JSON here")
    args = parser.parse_args()
    for level in args.levels:
        instruction_table(args.env, level)
    one = timed_evaluations(args, workers=1)
    many = timed_evaluations(args, workers=args.workers)
    if one[2] != many[2]:
        raise SystemExit(f"the {args.workers}-worker evaluation differs from the in-process one")
    domain = get_domain(args.env)
    episodes = sum(len(domain.tasks[level]) for level in args.levels) * args.episodes_per_task
    print(f"{args.env} {'+'.join(args.levels)}: {episodes} episodes at once; identical results")
    print(f"{'':22}{'first':>9}{'kept envs':>11}")
    print(f"{'in process':22}{one[0]:8.2f}s{one[1]:10.2f}s")
    print(f"{f'{args.workers} workers':22}{many[0]:8.2f}s{many[1]:10.2f}s")
    print(f"{'speed-up':22}{one[0] / many[0]:8.2f}x{one[1] / many[1]:10.2f}x")
    if args.out:
        work = f"evaluation, {episodes} episodes"
        timings = [
            (f"{work}: first (builds the envs)", one[0], many[0]),
            (f"{work}: on the kept envs", one[1], many[1]),
        ]
        write_parallel_figures(args.out, args.env, args.workers, timings)


if __name__ == "__main__":
    main()
