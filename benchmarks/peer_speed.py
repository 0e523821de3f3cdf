"""Updates/s of our algorithms and d3rlpy 2.8.1's, measured in pairs on the same data, and the share
of this CPU's matrix-product peak each one reaches.

    .venv-peer/bin/python benchmarks/peer_speed.py --env MetaWorld-v0 --data data/MetaWorld-v0/real-train \\
        --algorithms BC TD3BC IQL CQL BCQ --steps 300 --repeats 3 --precisions 32-true bf16-mixed [--device cuda [--storage-device cuda]]

Both sides train exactly as in ``peer_check.py`` (data sampling included, the first updates not
timed) but without evaluation, and alternate run by run, so a change in machine load hits both.
Ours runs once per ``--precisions`` entry (``bf16-mixed``: Lightning's bfloat16 autocast; d3rlpy
always float32). Prints the median over ``--repeats`` per algorithm and implementation.

Fraction of peak: the floating-point operations of one update (every matrix product of the
forward and backward passes, counted with ``torch.utils.flop_counter``'s formulas over ``FLOP_COUNT_STEPS``
training updates, so an actor updated every other step counts at its rate) times updates/s, over
the sustained matrix-product throughput at the networks' shapes in the same dtype and number of
threads (``--threads``), or on the GPU (``--device cuda``, where these small products measure kernel launches as
much as arithmetic). Results accumulate per algorithm (a rerun replaces it) in
``benchmarks/results/peer_speed_<env>[_<machine>][_<N>threads|_<GPU>].json`` (``--machine``: another CPU's
figures, kept beside the stored ones). Run it on an otherwise idle machine: on
a shared 2-core CPU the figures move by a factor of two with the other jobs.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
from types import SimpleNamespace

import torch
from matrix_flops import MatrixFlops, product_throughput  # benchmarks/ is on sys.path
from ours_training import (  # benchmarks/ is on sys.path
    FLOP_COUNT_STEPS,
    add_comparison_arguments,
    comparison_run,
    ours_flops_per_update,
    ours_label,
    peer_speed_results,
    train_ours,
)
from peer_check import d3rlpy_config, is_discrete, mdp_dataset, state_scaler, train_d3rlpy

from imaginebench.report import SPEED_HEADER, speed_env, speed_rows
from imaginebench.storage import atomic_write_text

PEAK_DTYPES = {"ours": torch.float32, "ours-bf16": torch.bfloat16, "d3rlpy": torch.float32}


def d3rlpy_flops_per_update(name: str, run: SimpleNamespace, dataset, discrete: bool, scaler) -> float:
    with MatrixFlops() as counter:
        train_d3rlpy(name, SimpleNamespace(**{**vars(run), "steps": FLOP_COUNT_STEPS}), 0, dataset, discrete, scaler)
    return counter.total / FLOP_COUNT_STEPS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_comparison_arguments(parser, steps=300)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--precisions", nargs="+", default=["32-true"], choices=["32-true", "bf16-mixed"])
    parser.add_argument("--threads", type=int, default=1, help="torch threads of both sides")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"], help="where both sides train")
    parser.add_argument(
        "--storage-device",
        default="cpu",
        choices=["cpu", "cuda"],
        help="where our transitions are kept (data.storage_device): cuda gathers the batches on the GPU",
    )
    parser.add_argument(
        "--machine",
        help="a name for this CPU (letters, digits, '-'), added to the results file's name so that figures of "
        "another CPU sit beside the stored ones instead of replacing them (ratios move with the CPU)",
    )
    args = parser.parse_args()
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: torch sees no GPU on this machine")
    if args.storage_device == "cuda" and args.device != "cuda":
        parser.error("--storage-device cuda: train there too (--device cuda)")
    if args.machine is not None and not re.fullmatch(r"[A-Za-z0-9-]+", args.machine):
        parser.error(f"--machine {args.machine!r}: use letters, digits and '-' only (it becomes part of a file name)")
    torch.set_num_threads(args.threads)
    gpu = gpu_label() if args.device == "cuda" else None
    discrete = is_discrete(args.data)
    dataset = mdp_dataset(args.data, discrete)
    scaler = None if discrete else state_scaler(args.data)
    path = peer_speed_results(args.env, args.threads, gpu, args.machine)
    results = json.loads(path.read_text()) if path.exists() else {}
    labels = [ours_label(precision) for precision in args.precisions] + ["d3rlpy"]
    dtype_peaks = {
        dtype: product_throughput(dtype, device=args.device) for dtype in {PEAK_DTYPES[label] for label in labels}
    }
    peaks = {label: dtype_peaks[PEAK_DTYPES[label]] for label in labels}  # float32: one figure for both sides
    print("matrix-product peak, GFLOP/s:", {label: round(peak, 1) for label, peak in peaks.items()}, flush=True)
    for name in args.algorithms:
        runs = {
            ours_label(precision): comparison_run(
                args, precision=precision, device=args.device, storage_device=args.storage_device
            )
            for precision in args.precisions
        }
        if d3rlpy_config(name, discrete, args.batch_size) is not None:
            runs["d3rlpy"] = comparison_run(args, device=args.device)
        speeds: dict[str, list[float]] = {label: [] for label in runs}
        for _ in range(args.repeats):
            for label, run in runs.items():
                if label == "d3rlpy":
                    speeds[label].append(train_d3rlpy(name, run, 0, dataset, discrete, scaler)[1])
                else:
                    speeds[label].append(train_ours(name, run, seed=0)[1])
        flops = {
            label: d3rlpy_flops_per_update(name, run, dataset, discrete, scaler)
            if label == "d3rlpy"
            else ours_flops_per_update(name, run)
            for label, run in runs.items()
        }
        results[name] = {
            "steps": args.steps,
            "batch_size": args.batch_size,
            "updates_per_second": speeds,
            "flops_per_update": flops,
            "peak_gflops": {label: peaks[label] for label in runs},
            "storage_device": args.storage_device,
        }
        print(name, {label: f"{statistics.median(values):.1f}" for label, values in speeds.items()}, flush=True)
        atomic_write_text(json.dumps(results, indent=1), path)
    print_table(speed_env(path), results)


def gpu_label() -> str:
    """``H100`` for an "NVIDIA H100 80GB HBM3": the model names the results file of a GPU run."""
    name = torch.cuda.get_device_name()
    return next((word for word in name.split() if word[:1] == "H" and word[1:].isdigit()), name.split()[-1])


def print_table(title: str, results: dict) -> None:
    """Every algorithm measured so far in ``results`` (runs of this script accumulate in the JSON file)."""
    print(f"\n{title}: median updates/s over paired runs, ratio to d3rlpy, GFLOP per update, % of peak")
    print("\n".join([*SPEED_HEADER, *speed_rows(title, results)]))


if __name__ == "__main__":
    main()
