"""The ``imaginebench`` command: LightningCLI subcommands plus the data subcommands."""

from __future__ import annotations

import argparse
import sys

LIGHTNING_SUBCOMMANDS = ("fit", "validate", "test")
HELP = """usage: imaginebench <command> [options]

Training and evaluation (LightningCLI; see `imaginebench fit --help`):
  fit        train an offline RL agent:   imaginebench fit --config lightning_config/babyai/bc.yaml
  validate   evaluate a checkpoint:       imaginebench validate --config ... --ckpt_path CKPT
  test       evaluate a checkpoint:       imaginebench test --config ... --ckpt_path CKPT

Data:
  collect    collect expert episodes:     imaginebench collect --env BabyAI-v0 --level train --episodes N --out DIR
"""


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(HELP)
        return
    command, rest = argv[0], argv[1:]
    if command in LIGHTNING_SUBCOMMANDS:
        from imaginebench.lightning_cli import run_lightning_cli

        run_lightning_cli([command, *rest])
    elif command == "collect":
        collect_main(rest)
    else:
        print(HELP, file=sys.stderr)
        sys.exit(f"imaginebench: unknown command {command!r}")


def collect_main(argv: list[str]) -> None:
    from imaginebench.instructions import DEFAULT_ENCODER

    parser = argparse.ArgumentParser(prog="imaginebench collect", description="Collect expert episodes into a dataset directory.")
    parser.add_argument("--env", required=True, help="env id, e.g. BabyAI-v0")
    parser.add_argument("--level", default="train", help="train (alias real), rephrase, easy or hard")
    parser.add_argument("--episodes", type=int, required=True)
    parser.add_argument("--out", required=True, help="dataset directory to create")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--encoder", default=DEFAULT_ENCODER, help="instruction encoder: the default or a local HF directory")
    parser.add_argument("--pooling", default="mean", choices=("mean", "cls", "pooler"))
    parser.add_argument("--overwrite", action="store_true", help="replace an existing dataset")
    args = parser.parse_args(argv)

    from imaginebench.collect import collect, format_success_table
    from imaginebench.datasets import load_episodes

    try:
        out = collect(args.env, args.level, args.episodes, args.out, seed=args.seed, encoder=args.encoder, pooling=args.pooling, overwrite=args.overwrite)
    except (ValueError, FileExistsError) as error:
        sys.exit(f"imaginebench collect: {error}")
    dataset = load_episodes(out)
    print(f"wrote {dataset.num_episodes} episodes, {dataset.num_steps} steps to {out}")
    print(format_success_table(dataset.metadata["counts"]))
