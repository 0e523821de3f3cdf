"""Tensor ops dispatched per training update, ours against d3rlpy 2.8.1 on the same data: on a GPU each is a kernel
launch or host work, and at batch 256 that, not arithmetic, bounds an update (docs/algorithms.md#speed).

    .venv-peer/bin/python benchmarks/tensor_ops.py --env MetaWorld-v0 --data data/MetaWorld-v0/real-train \\
        --algorithms BC TD3BC IQL CQL BCQ [--steps 20]

Counted on the CPU over ``--steps`` updates after the datamodule's setup (ours: data sampling included, as
``peer_speed.py`` times it), with the dispatch mode ``matrix_flops.MatrixFlops`` that also counts their operations.
"""

from __future__ import annotations

import argparse

from matrix_flops import FlopCount, MatrixFlops  # benchmarks/ is on sys.path
from ours_training import add_comparison_arguments, comparison_run, train_ours
from peer_check import is_discrete, mdp_dataset, state_scaler, train_d3rlpy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_comparison_arguments(parser, steps=20)
    args = parser.parse_args()
    discrete = is_discrete(args.data)
    dataset = mdp_dataset(args.data, discrete)
    scaler = None if discrete else state_scaler(args.data)
    print("| env | algorithm | tensor ops / update, ours | d3rlpy | d3rlpy ÷ ours |\n|---|---|---:|---:|---:|")
    for name in args.algorithms:
        run = comparison_run(args)
        ours = FlopCount()
        train_ours(name, run, 0, callbacks=[ours])
        with MatrixFlops() as peer:
            train_d3rlpy(name, run, 0, dataset, discrete, scaler)
        ours_ops, peer_ops = ours.counter.calls / args.steps, peer.calls / args.steps
        print(f"| {args.env} | {name} | {ours_ops:.0f} | {peer_ops:.0f} | {peer_ops / ours_ops:.2f} |", flush=True)


if __name__ == "__main__":
    main()
