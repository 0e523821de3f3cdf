"""Gradient updates per second of every algorithm at batch 256, through Lightning as training runs them.

    .venv/bin/python benchmarks/algorithm_speed.py [--steps 50] [--threads 1] [--device cpu] [--precision bf16-mixed]
        [--compile] [--only DiscreteCQL CQL]

Batches are random transitions with the dimensions and instruction counts of BabyAI-v0 (discrete)
and MetaWorld-v0 (continuous; 384-d MiniLM instruction embeddings), prepared once and served as fresh copies (losses
write into their batch), so the figure is the algorithm's own cost: data sampling is the
datamodule's and the same for every algorithm. PRDC searches 100,000 dataset rows. Prints a table
and, for a run of every algorithm, writes ``benchmarks/results/algorithm_speed[_compiled][_bf16].png``.
``--compile`` is the ``torch.compile`` trial: on a 2-core CPU it did not pay (README, Algorithms).
"""

from __future__ import annotations

import argparse
import itertools
from pathlib import Path

import lightning.pytorch as pl
import torch
from stopwatch import Stopwatch  # benchmarks/ is on sys.path when a script in it runs
from tensordict import TensorDict
from torch.utils.data import DataLoader
from torchrl.modules import MLP

from datamodules.offline_data import EpochBatches, as_is
from imaginebench.env_spec import EnvSpec
from imaginebench.plotting import headless_pyplot
from modules.bc import BC
from modules.bcq import BCQ
from modules.combo import COMBO
from modules.cql import CQL
from modules.discrete_bcq import DiscreteBCQ
from modules.discrete_cql import DiscreteCQL
from modules.iql import IQL
from modules.networks import TwoInputMLP
from modules.prdc import PRDC
from modules.td3_bc import TD3BC

SPECS = {
    "discrete (BabyAI-v0)": {"state_dim": 16, "embedding_dim": 384, "action_kind": "discrete", "num_actions": 7},
    "continuous (MetaWorld-v0)": {"state_dim": 91, "embedding_dim": 384, "action_kind": "continuous", "action_dim": 4},
}
ALGORITHMS = {"discrete": [BC, DiscreteCQL, DiscreteBCQ, IQL], "continuous": [BC, CQL, BCQ, IQL, TD3BC, PRDC, COMBO]}
BATCH_SIZE = 256
INSTRUCTIONS = {"discrete": 5016, "continuous": 120}
"""Distinct instructions in the default real data of BabyAI-v0 and MetaWorld-v0."""
PRDC_DATASET_ROWS = 100_000


def random_batch(spec: EnvSpec, rows: int, generator: torch.Generator) -> TensorDict:
    """Random transitions whose instructions come from a table as large as the real data's
    (:data:`INSTRUCTIONS`): PRDC's search groups rows by instruction."""
    table = torch.randn(INSTRUCTIONS[spec.action_kind], spec.embedding_dim, generator=generator)
    instruction = torch.randint(table.shape[0], (rows,), generator=generator)

    def observation() -> dict:
        return {
            "state": torch.randn(rows, spec.state_dim, generator=generator),
            "instruction_embedding": table[instruction],
        }

    if spec.is_discrete:
        action = torch.randint(spec.num_actions, (rows,), generator=generator)
    else:
        action = torch.rand(rows, spec.action_dim, generator=generator) * 2 - 1
    flags = torch.rand(rows, 1, generator=generator) < 0.02
    next_part = {
        **observation(),
        "reward": torch.rand(rows, 1, generator=generator),
        "terminated": flags,
        "truncated": torch.zeros_like(flags),
        "done": flags,
    }
    return TensorDict(
        {**observation(), "action": action, "source": torch.zeros(rows, dtype=torch.int64), "next": next_part},
        batch_size=[rows],
    )


def compile_networks(module: torch.nn.Module) -> None:
    """``torch.compile`` every MLP in place (fusing bias, activation and the split first layer);
    the optimizer and the TorchRL losses stay eager."""
    for network in module.modules():
        if isinstance(network, (MLP, TwoInputMLP)):
            network.compile(dynamic=False)


def updates_per_second(
    algorithm: type, env_spec: dict, steps: int, device: str, compile_mlps: bool = False, precision: str = "32-true"
) -> float:
    spec = EnvSpec(**env_spec)
    generator = torch.Generator().manual_seed(0)
    batches = [random_batch(spec, BATCH_SIZE, generator).to(device) for _ in range(8)]
    module = algorithm(env_spec)
    if compile_mlps:
        compile_networks(module)
    if isinstance(module, PRDC):
        module.index_dataset(random_batch(spec, PRDC_DATASET_ROWS, generator))
    warmup = 5  # compilation happens here
    stopwatch = Stopwatch(warmup)
    fresh_batches = EpochBatches(lambda: (batches[i % len(batches)].clone() for i in itertools.count()), warmup + steps)
    trainer = pl.Trainer(
        max_steps=warmup + steps,
        accelerator=device,
        precision=precision,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        callbacks=[stopwatch],
    )
    trainer.fit(module, train_dataloaders=DataLoader(fresh_batches, batch_size=None, collate_fn=as_is))
    return stopwatch.updates_per_second(warmup + steps)


def plot(rows: list[tuple[str, str, float]], path: Path) -> None:
    plt = headless_pyplot()

    figure, axis = plt.subplots(figsize=(8, 4))
    labels = [f"{name}\n{kind.split()[0]}" for kind, name, _ in rows]
    axis.bar(labels, [rate for *_, rate in rows])
    axis.set_yscale("log")
    axis.set_ylabel(f"updates / s at batch {BATCH_SIZE}")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50, help="timed updates per algorithm (after 5 warm-up ones)")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--precision", default="32-true", choices=["32-true", "bf16-mixed"], help="the Trainer's")
    parser.add_argument(
        "--compile", action="store_true", help="torch.compile every MLP first (compiling takes minutes)"
    )
    parser.add_argument("--only", nargs="*", default=None, help="algorithm class names to time (default: all)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    rows = []
    for kind, env_spec in SPECS.items():
        for algorithm in ALGORITHMS[env_spec["action_kind"]]:
            if args.only and algorithm.__name__ not in args.only:
                continue
            rate = updates_per_second(algorithm, env_spec, args.steps, args.device, args.compile, args.precision)
            rows.append((kind, algorithm.__name__, rate))
            print(f"{kind:26s} {algorithm.__name__:11s} {rate:8.1f} updates/s", flush=True)
    print(
        f"\n| action space | algorithm | updates/s (batch {BATCH_SIZE}, {args.threads} thread(s), {args.device}, {args.precision}{', compiled' if args.compile else ''}) |\n|---|---|---|"
    )
    for kind, name, rate in rows:
        print(f"| {kind} | {name} | {rate:.1f} |")
    if not args.only:  # a partial run leaves the full figure alone
        suffix = ("_compiled" if args.compile else "") + ("_bf16" if args.precision == "bf16-mixed" else "")
        plot(rows, Path(__file__).parent / "results" / f"algorithm_speed{suffix}.png")


if __name__ == "__main__":
    main()
