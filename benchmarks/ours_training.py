"""Our algorithms trained on a real dataset, as the checks against d3rlpy time them (data sampling included, the
first updates not timed). Kept apart from ``peer_check.py`` so scripts that need no d3rlpy (``update_profile.py``)
run in ``.venv``."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace

import lightning.pytorch as pl
from matrix_flops import FlopCount  # benchmarks/ is on sys.path when a script in it runs
from stopwatch import Stopwatch

from datamodules.offline_data import OfflineDataModule
from modules.bc import BC
from modules.bcq import BCQ
from modules.combo import COMBO
from modules.cql import CQL
from modules.discrete_bcq import DiscreteBCQ
from modules.discrete_cql import DiscreteCQL
from modules.iql import IQL
from modules.prdc import PRDC
from modules.td3_bc import TD3BC

WARMUP_STEPS = 10
FLOP_COUNT_STEPS = 20

OURS = {
    "discrete": {"BC": BC, "CQL": DiscreteCQL, "BCQ": DiscreteBCQ, "IQL": IQL},
    "continuous": {"BC": BC, "CQL": CQL, "BCQ": BCQ, "IQL": IQL, "TD3BC": TD3BC, "COMBO": COMBO, "PRDC": PRDC},
}
"""Our class for each of d3rlpy's names, per action kind (d3rlpy's DiscreteCQL is our DiscreteCQL, and so on), and
COMBO and PRDC, which d3rlpy lacks: ``update_profile.py`` profiles them alone."""


def real_data_module(args, seed: int) -> OfflineDataModule:
    """The datamodule every timed run draws from: ``args.data`` only, ``args.steps`` batches of ``args.batch_size``,
    kept on ``args.storage_device`` (default ``cpu``)."""
    data = OfflineDataModule(
        args.env,
        real=[args.data],
        mix_ratio_real=1.0,
        batch_size=args.batch_size,
        batches_per_epoch=args.steps,
        seed=seed,
        evaluation_batches=1,
        storage_device=getattr(args, "storage_device", "cpu"),
    )
    data.setup("fit")
    return data


def train_ours(name: str, args, seed: int, callbacks: Sequence[pl.Callback] = ()) -> tuple[object, float]:
    """``args.precision`` (default ``32-true``) is the Trainer's; ``bf16-mixed`` runs the products in bfloat16.
    ``args.device`` (default ``cpu``): ``cuda`` trains on the first GPU."""
    pl.seed_everything(seed, verbose=False)
    data = real_data_module(args, seed)
    module = OURS[data.env_spec["action_kind"]][name](data.env_spec)
    stopwatch = Stopwatch(WARMUP_STEPS)
    trainer = pl.Trainer(
        max_steps=args.steps,
        accelerator="gpu" if getattr(args, "device", "cpu") == "cuda" else "cpu",
        devices=1,
        precision=getattr(args, "precision", "32-true"),
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        limit_val_batches=0,
        callbacks=[stopwatch, *callbacks],
    )
    trainer.fit(module, datamodule=data)
    return module.eval(), stopwatch.updates_per_second(args.steps)


def add_comparison_arguments(parser: argparse.ArgumentParser, steps: int, steps_help: str = "updates per run") -> None:
    """The options every measurement against d3rlpy shares: env and dataset (Meta-World's by default), algorithms,
    updates and batch size; :func:`comparison_run` turns them into one run's settings."""
    parser.add_argument("--env", default="MetaWorld-v0")
    parser.add_argument("--data", default="data/MetaWorld-v0/real-train")
    parser.add_argument("--algorithms", nargs="+", default=["BC", "TD3BC", "IQL", "CQL", "BCQ"])
    parser.add_argument("--steps", type=int, default=steps, help=steps_help)
    parser.add_argument("--batch-size", type=int, default=256)


def comparison_run(args: argparse.Namespace, **settings: object) -> SimpleNamespace:
    """One run's settings for :func:`train_ours` or ``peer_check.train_d3rlpy``: the shared options of
    :func:`add_comparison_arguments` plus ``settings`` (``precision``, ``device``)."""
    return SimpleNamespace(env=args.env, data=args.data, steps=args.steps, batch_size=args.batch_size, **settings)


def ours_label(precision: str) -> str:
    """Our runs are stored per precision: ``ours`` (float32) and ``ours-bf16`` (``bf16-mixed``)."""
    return "ours" if precision == "32-true" else "ours-bf16"


def ours_flops_per_update(name: str, args) -> float:
    """Matrix-product operations of one update, counted over :data:`FLOP_COUNT_STEPS` updates (so an actor updated
    every other step counts at its rate)."""
    count = FlopCount()
    train_ours(name, SimpleNamespace(**{**vars(args), "steps": FLOP_COUNT_STEPS}), 0, callbacks=[count])
    return count.counter.total / FLOP_COUNT_STEPS


def peer_speed_results(env: str, threads: int, gpu: str | None = None, machine: str | None = None) -> Path:
    """The file ``peer_speed.py`` accumulates its runs in, for ``env`` at ``threads`` torch threads, or on the GPU
    named ``gpu`` (``H100``); ``machine`` names a CPU other than the one the stored figures were made on."""
    parts = [f"peer_speed_{env}"]
    if machine:
        parts.append(machine)
    if gpu:
        parts.append(gpu)
    elif threads != 1:
        parts.append(f"{threads}threads")
    return Path(__file__).parent / "results" / f"{'_'.join(parts)}.json"
