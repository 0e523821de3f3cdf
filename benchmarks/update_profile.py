"""Where one training update's time goes, per algorithm, on the real data as ``peer_speed.py`` times it.

    .venv/bin/python benchmarks/update_profile.py --env MetaWorld-v0 --data data/MetaWorld-v0/real-train \\
        --algorithms BC TD3BC IQL CQL BCQ [COMBO PRDC] [--steps 200] [--threads 1] [--precision 32-true] [--top 12] \\
        [--machine M]

For each algorithm: milliseconds per update unprofiled (data sampling included), then, from a second run under
``torch.profiler``, the self time per update of the matrix products (forward and backward), of the optimizer's kernels
(Adam, target updates), and of every other torch kernel; what is left is Python: Lightning's loop, TorchRL's losses
and TensorDict bookkeeping, the autograd engine. Also the time the products would take at this CPU's measured
matrix-product peak (``matrix_flops.py``), the time drawing a batch alone takes, and, where ``peer_speed.py`` has
stored d3rlpy's updates/s for the env, the time per update that twice d3rlpy's speed allows. The profiler adds a
little to every kernel's time, so the kernels' figures are upper bounds and the Python figure a lower one.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from types import SimpleNamespace

import lightning.pytorch as pl
import torch
from matrix_flops import product_throughput  # benchmarks/ is on sys.path
from ours_training import (
    WARMUP_STEPS,
    add_comparison_arguments,
    comparison_run,
    ours_flops_per_update,
    ours_label,
    peer_speed_results,
    real_data_module,
    train_ours,
)
from torch.profiler import ProfilerActivity, profile

PRODUCTS = {
    "aten::mm",
    "aten::addmm",
    "aten::bmm",
    "aten::baddbmm",
    "aten::addmv",
    "aten::mv",
    "aten::_addmm_activation",
}
OPTIMIZER_WORDS = ("adam", "_foreach_", "lerp")


class ProfileUpdates(pl.Callback):
    """Profiles the updates after the warm-up ones (as ``Stopwatch`` times them), CPU kernels only."""

    def __init__(self) -> None:
        self.profiler = profile(activities=[ProfilerActivity.CPU])
        self.updates = 0

    def on_train_batch_end(self, trainer: pl.Trainer, *args) -> None:
        if trainer.global_step == WARMUP_STEPS:
            self.profiler.__enter__()
        elif trainer.global_step > WARMUP_STEPS:
            self.updates += 1

    def on_train_end(self, trainer: pl.Trainer, module: pl.LightningModule) -> None:
        self.profiler.__exit__(None, None, None)

    def kernel_milliseconds(self) -> dict[str, float]:
        """Self time per update of every torch kernel, most first. Record-function ranges and autograd wrappers
        are left out: their self time is Python."""
        events = [event for event in self.profiler.key_averages() if event.key.startswith("aten::")]
        events.sort(key=lambda event: -event.self_cpu_time_total)
        return {event.key: event.self_cpu_time_total / 1000 / self.updates for event in events}

    def milliseconds_per_update(self) -> dict[str, float]:
        """Self time of the kernels per update, by kind: products, optimizer, other."""
        kinds = {"products": 0.0, "optimizer": 0.0, "other kernels": 0.0}
        for kernel, milliseconds in self.kernel_milliseconds().items():
            kind = (
                "products"
                if kernel in PRODUCTS
                else "optimizer"
                if any(word in kernel.lower() for word in OPTIMIZER_WORDS)
                else "other kernels"
            )
            kinds[kind] += milliseconds
        return kinds


def sampling_milliseconds(run: SimpleNamespace) -> float:
    """Drawing a batch from the datamodule alone, as training draws it (the first ones not timed)."""
    loader = iter(real_data_module(run, seed=0).train_dataloader())
    for _ in range(WARMUP_STEPS):
        next(loader)
    start = time.perf_counter()
    for _ in range(run.steps - WARMUP_STEPS):
        next(loader)
    return (time.perf_counter() - start) * 1000 / (run.steps - WARMUP_STEPS)


def twice_d3rlpy_milliseconds(env: str, threads: int, name: str, machine: str | None) -> float | None:
    path = peer_speed_results(env, threads, machine=machine)
    stored = json.loads(path.read_text()).get(name, {}) if path.exists() else {}
    peer = stored.get("updates_per_second", {}).get("d3rlpy")
    return 1000 / (2 * statistics.median(peer)) if peer else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_comparison_arguments(parser, steps=200, steps_help=f"updates per run, the first {WARMUP_STEPS} not counted")
    parser.add_argument("--precision", default="32-true", choices=["32-true", "bf16-mixed"])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--top", type=int, default=0, help="also list each algorithm's N costliest kernels")
    parser.add_argument("--machine", help="read d3rlpy's figures from peer_speed.py's runs with this --machine")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    run = comparison_run(args, precision=args.precision)
    peak = product_throughput(torch.float32 if args.precision == "32-true" else torch.bfloat16)
    sampling = sampling_milliseconds(run)
    print(f"matrix-product peak {peak:.1f} GFLOP/s; drawing a batch {sampling:.2f} ms", flush=True)
    header = "| algorithm | ms / update | products | products at peak | optimizer | other kernels | Python | 2× d3rlpy needs |"
    rows = []
    for name in args.algorithms:
        total = 1000 / train_ours(name, run, seed=0)[1]
        profiled = ProfileUpdates()
        train_ours(name, run, seed=0, callbacks=[profiled])
        kernels = profiled.milliseconds_per_update()
        at_peak = ours_flops_per_update(name, run) / peak / 1e6
        target = twice_d3rlpy_milliseconds(args.env, args.threads, name, args.machine)
        python = max(total - sum(kernels.values()), 0.0)
        rows.append(
            f"| {name} ({ours_label(args.precision)}) | {total:.2f} | {kernels['products']:.2f} | {at_peak:.2f} | "
            f"{kernels['optimizer']:.2f} | {kernels['other kernels']:.2f} | {python:.2f} | "
            f"{'–' if target is None else f'{target:.2f}'} |"
        )
        print(rows[-1], flush=True)
        for kernel, milliseconds in list(profiled.kernel_milliseconds().items())[: args.top]:
            print(f"    {kernel:40s} {milliseconds:.3f} ms", flush=True)
    print(f"\n{args.env}, {args.threads} thread(s), batch {args.batch_size}, milliseconds per update")
    print("\n".join([header, "|---|" + "---:|" * 7, *rows]))


if __name__ == "__main__":
    main()
