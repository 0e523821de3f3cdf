"""Wall time of expert collection in one worker and in N, on the same episodes, in the same run.

    .venv/bin/python benchmarks/collect_speed.py --env Ball-v0 --level train --episodes 1000 --shard-episodes 125

Both collections write into a temporary directory and must give the same dataset (the run fails
otherwise); the one-worker run goes first, after the level's instructions are encoded, so neither
pays for the encoder. N workers include their start-up (each imports torch and the simulator, a few
seconds), which is why the default is 1000 episodes, not a handful: a Ball-v0 episode takes about
50 ms, and real collections are 10,000 episodes. Run it on an otherwise idle machine: on a shared
CPU the other jobs take the cores the workers are meant to have.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from parallel_figures import write_parallel_figures

from imaginebench.collect import collect
from imaginebench.datasets import load_episodes
from imaginebench.datasets.compare import dataset_differences
from imaginebench.processes import available_cores
from imaginebench.registry import instruction_table


def timed_collect(args: argparse.Namespace, out: Path, workers: int) -> float:
    """Seconds to collect the run into ``out`` with ``workers`` processes."""
    start = time.perf_counter()
    collect(
        args.env,
        args.level,
        args.episodes,
        out,
        seed=args.seed,
        shard_episodes=args.shard_episodes,
        progress=False,
        workers=workers,
    )
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="Ball-v0")
    parser.add_argument("--level", default="train")
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--shard-episodes", type=int, default=125)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=available_cores(), help="N (default: all cores)")
    parser.add_argument("--out", type=Path, help="also write the figures as JSON here")
    args = parser.parse_args()
    instruction_table(args.env, args.level)
    with tempfile.TemporaryDirectory(prefix="collect-speed-") as root:
        one = timed_collect(args, Path(root) / "one", workers=1)
        many = timed_collect(args, Path(root) / "many", workers=args.workers)
        differences = dataset_differences(load_episodes(Path(root) / "one"), load_episodes(Path(root) / "many"))
    if differences:
        raise SystemExit(f"the {args.workers}-worker dataset differs from the one-worker dataset in {differences}")
    shards = -(-args.episodes // args.shard_episodes)
    print(f"{args.env} {args.level}: {args.episodes} episodes in {shards} shards; identical datasets")
    print(f"1 worker:   {one:8.2f} s")
    print(f"{args.workers} workers: {many:8.2f} s  (at most {min(args.workers, shards)} busy)")
    print(f"speed-up:   {one / many:8.2f}x")
    if args.out:
        write_parallel_figures(args.out, args.env, args.workers, [(f"collect, {args.episodes} episodes", one, many)])


if __name__ == "__main__":
    main()
