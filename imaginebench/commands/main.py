"""The ``imaginebench`` command: LightningCLI subcommands plus the data subcommands."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from imaginebench.errors import check_can_create, reported_to_user
from imaginebench.upstream.harmless_warnings import silence_known_harmless_warnings

LIGHTNING_SUBCOMMANDS = ("fit", "validate", "test")
HELP = """usage: imaginebench <command> [options]

Training and evaluation (LightningCLI; see `imaginebench fit --help`):
  fit        train an offline RL agent:   imaginebench fit --config lightning_config/babyai/bc.yaml
  validate   evaluate a checkpoint:       imaginebench validate --config ... --ckpt_path CKPT
  test       evaluate a checkpoint:       imaginebench test --config ... --ckpt_path CKPT

Data:
  collect    collect expert episodes:     imaginebench collect --env BabyAI-v0 --level train --episodes N --out DIR [--workers N]
  experts    train learned experts (SAC):  imaginebench experts train --env Mujoco-v0 --skills jump-forward --seed 0
  export     a dataset in another format: imaginebench export --format minari|parquet|d3rlpy DIR [--out OUT]

Imaginary rollouts (KALM):
  ground           fine-tune a language model on real episodes (LightningCLI fit):
                   imaginebench ground --config lightning_config/grounding/babyai.yaml
  imagine          generate rollouts for a level's goals:
                   imaginebench imagine --checkpoint CKPT --env BabyAI-v0 --level easy --rollouts N --out DIR
  rollout-quality  replay rollouts in the simulator and report their quality:
                   imaginebench rollout-quality DIR [DIR ...]
  pipeline         collect -> ground -> imagine -> quality -> fit -> results:
                   imaginebench pipeline --env BabyAI-v0

Results:
  sweep      a grid of fit runs on Ray Tune (resumable): imaginebench sweep --config sweeps/babyai-main.yaml --workers 2
  report     the results page from stored runs (generated, never edited by hand):
             imaginebench report benchmarks/results/runs --quality benchmarks/results/quality/*.json
                 --peers benchmarks/results/peer_*.json --out docs/results.md

A mistake in a file, field or option prints one line and exits 1; IMAGINEBENCH_DEBUG=1 shows its traceback.
"""


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(HELP)
        return
    command, rest = argv[0], argv[1:]
    silence_known_harmless_warnings()
    with reported_to_user(command):
        run_command(command, rest)


def run_command(command: str, rest: list[str]) -> None:
    if command in LIGHTNING_SUBCOMMANDS:
        from imaginebench.commands.lightning_cli import run_lightning_cli

        run_lightning_cli([command, *rest])
    elif command == "ground":
        from imaginebench.commands.lightning_cli import run_grounding_cli

        run_grounding_cli(rest)
    elif command == "collect":
        collect_main(rest)
    elif command == "experts":
        from imaginebench.experts.train import experts_main

        experts_main(rest)
    elif command == "export":
        export_main(rest)
    elif command == "imagine":
        imagine_main(rest)
    elif command == "rollout-quality":
        quality_main(rest)
    elif command == "report":
        report_main(rest)
    elif command == "sweep":
        sweep_main(rest)
    elif command == "pipeline":
        from imaginebench.commands.pipeline import pipeline_main

        pipeline_main(rest)
    else:
        print(HELP, file=sys.stderr)
        sys.exit(f"imaginebench: unknown command {command!r}")


def collect_main(argv: list[str]) -> None:
    from imaginebench.instructions import DEFAULT_ENCODER

    parser = argparse.ArgumentParser(
        prog="imaginebench collect", description="Collect expert episodes into a dataset directory."
    )
    parser.add_argument("--env", required=True, help="env id, e.g. BabyAI-v0")
    parser.add_argument("--level", default="train", help="train (alias real), rephrase, easy or hard")
    parser.add_argument("--episodes", type=int, required=True)
    parser.add_argument("--out", required=True, help="dataset directory to create")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--encoder", default=DEFAULT_ENCODER, help="instruction encoder: the default or a local HF directory"
    )
    parser.add_argument("--pooling", default="mean", choices=("mean", "cls", "pooler"))
    parser.add_argument("--overwrite", action="store_true", help="replace an existing dataset")
    parser.add_argument(
        "--workers", type=int, default=None, help="processes collecting shards at once (default: all cores)"
    )
    parser.add_argument(
        "--epsilon",
        type=float,
        default=0.0,
        help="discrete actions: share of steps that take (and record) a uniformly random action",
    )
    parser.add_argument(
        "--steps-after-success",
        type=int,
        default=0,
        help="discrete actions: random steps each episode takes after its goal is reached (episodes never terminate)",
    )
    args = parser.parse_args(argv)

    from imaginebench.collect import collect, format_success_table
    from imaginebench.datasets import load_episodes
    from imaginebench.processes import available_cores

    out = collect(
        args.env,
        args.level,
        args.episodes,
        args.out,
        seed=args.seed,
        encoder=args.encoder,
        pooling=args.pooling,
        overwrite=args.overwrite,
        workers=available_cores() if args.workers is None else args.workers,
        epsilon=args.epsilon,
        steps_after_success=args.steps_after_success,
    )
    dataset = load_episodes(out)
    print(f"wrote {dataset.num_episodes} episodes, {dataset.num_steps} steps to {out}")
    print(format_success_table(dataset.metadata["counts"]))


def export_main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(
        prog="imaginebench export", description="Write a dataset in a standard format (see docs/datasets.md)."
    )
    parser.add_argument("dataset", help="a dataset directory (or a local Minari dataset id)")
    parser.add_argument("--format", required=True, help="minari, parquet or d3rlpy")
    parser.add_argument("--out", help="parquet, d3rlpy: the directory to create")
    parser.add_argument(
        "--dataset-id",
        help="minari: the id (default imaginebench/<env_id>/<source>-<level>-v0), under $MINARI_DATASETS_PATH",
    )
    parser.add_argument("--overwrite", action="store_true", help="replace an existing export")
    args = parser.parse_args(argv)

    from imaginebench.datasets import export_dataset, open_dataset

    where = export_dataset(open_dataset(args.dataset), args.format, args.out, args.dataset_id, args.overwrite)
    print(f"wrote {args.dataset} as {args.format}: {where}")


def imagine_main(argv: list[str]) -> None:
    from imaginebench.instructions import DEFAULT_ENCODER

    parser = argparse.ArgumentParser(
        prog="imaginebench imagine", description="Generate imaginary rollouts with a grounded language model."
    )
    parser.add_argument("--checkpoint", required=True, help="a checkpoint written by `imaginebench ground`")
    parser.add_argument("--env", required=True, help="env id, e.g. BabyAI-v0")
    parser.add_argument("--level", required=True, help="rephrase, easy or hard (train also works)")
    parser.add_argument("--rollouts", type=int, required=True)
    parser.add_argument("--out", required=True, help="dataset directory to create")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--temperature", type=float, default=0.0, help="0: greedy actions; > 0: sampled")
    parser.add_argument(
        "--next-states",
        default="rollout",
        help="rollout: read each next state inside the goal's rollout (KALM); dynamics: from the goal-free dynamics prompt",
    )
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--device", default="cuda" if _cuda() else "cpu")
    parser.add_argument(
        "--encoder", default=DEFAULT_ENCODER, help="instruction encoder: the default or a local HF directory"
    )
    parser.add_argument("--overwrite", action="store_true", help="replace an existing dataset")
    args = parser.parse_args(argv)

    from imaginebench.commands.imagine import imagine
    from imaginebench.datasets import load_episodes

    out = imagine(
        args.checkpoint,
        args.env,
        args.level,
        args.rollouts,
        args.out,
        seed=args.seed,
        temperature=args.temperature,
        batch_size=args.batch_size,
        device=args.device,
        encoder=args.encoder,
        overwrite=args.overwrite,
        next_states=args.next_states,
    )
    dataset = load_episodes(out)
    print(f"wrote {dataset.num_episodes} imaginary rollouts, {dataset.num_steps} steps to {out}")


def quality_main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(
        prog="imaginebench rollout-quality", description="Replay rollouts in the simulator and report their quality."
    )
    parser.add_argument("datasets", nargs="+", help="dataset directories (imaginary or real)")
    parser.add_argument("--out", help="also write the full report (with per-rollout checks) to this JSON file")
    parser.add_argument(
        "--summary-only", action="store_true", help="--out without the per-rollout checks (small, for storing)"
    )
    args = parser.parse_args(argv)

    from imaginebench.datasets import load_episodes
    from imaginebench.rollout_quality import format_quality_table, quality_report, write_quality_report

    if args.out:
        check_can_create(args.out, "--out")  # before the replay, which takes minutes
    reports = [quality_report(load_episodes(path), progress=True) for path in args.datasets]
    print(format_quality_table(reports))
    if args.out:
        if args.summary_only:
            reports = [{key: value for key, value in report.items() if key != "rollouts"} for report in reports]
        write_quality_report(reports, args.out)
        print(f"wrote {args.out}")


def report_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="imaginebench report", description="Generate the results page from stored result files."
    )
    parser.add_argument("runs", nargs="+", help="directories holding run directories (results.json, config.yaml)")
    parser.add_argument("--quality", nargs="*", default=[], help="rollout-quality JSON reports")
    parser.add_argument("--peers", nargs="*", default=[], help="benchmarks/peer_check.py results (peer_<env>.json)")
    parser.add_argument(
        "--speed", nargs="*", default=[], help="benchmarks/peer_speed.py results (peer_speed_<env>[_<N>threads].json)"
    )
    parser.add_argument(
        "--parallel", nargs="*", default=[], help="benchmarks/collect_speed.py and evaluation_speed.py --out files"
    )
    parser.add_argument("--stages", nargs="*", default=[], help="imaginebench pipeline's stage_costs.json files")
    parser.add_argument("--out", default="docs/results.md", help="the Markdown page; plots are written beside it")
    parser.add_argument("--per-task", action="store_true", help="also a table of every task's success per level")
    return parser


def report_main(argv: list[str]) -> None:
    args = report_parser().parse_args(argv)
    for path in write_parsed_report(args, "imaginebench report " + " ".join(argv), args.out):
        print(f"wrote {path}")


def write_parsed_report(args: argparse.Namespace, command: str, out: str) -> list[Path]:
    """Write the page ``report_parser`` arguments describe to ``out``; the results-page test calls this too, so an
    option added to the command cannot be missed when the test regenerates the page."""
    from imaginebench.report import write_report

    names = (args.runs, args.quality, args.peers, args.speed, args.parallel, args.stages)
    runs, quality, peers, speed, parallel, stages = ([Path(name) for name in paths] for paths in names)
    return write_report(runs, Path(out), quality, peers, command, args.per_task, speed, parallel, stages)


def _cuda() -> bool:
    import torch

    return torch.cuda.is_available()


def sweep_main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(
        prog="imaginebench sweep", description="Run a grid of fit runs (config × data variant × seed) on Ray Tune."
    )
    parser.add_argument("--config", required=True, help="sweep file (sweeps/<name>.yaml)")
    parser.add_argument("--workers", type=int, default=1, help="cells run at once (local Ray: workers × threads CPUs)")
    parser.add_argument("--threads", type=int, default=1, help="intra-op threads per cell (OMP_NUM_THREADS)")
    parser.add_argument("--address", default=None, help="a running Ray cluster (default: start a local Ray)")
    parser.add_argument(
        "--out", default=None, help="run directories (default: the file's out, else runs/sweeps/<name>)"
    )
    args = parser.parse_args(argv)

    from imaginebench.commands.sweep import read_sweep, run_sweep
    from imaginebench.errors import check_at_least

    check_at_least(1, {"--workers": args.workers, "--threads": args.threads})
    outcome = run_sweep(read_sweep(Path(args.config), args.out), args.workers, args.threads, args.address)
    print(
        f"sweep: {len(outcome['done'])} cells done, {len(outcome['skipped'])} finished before, "
        f"{len(outcome['failed'])} failed{': ' + ', '.join(outcome['failed']) if outcome['failed'] else ''}"
    )
    if outcome.get("interrupted"):
        print(f"sweep: {len(outcome['interrupted'])} interrupted; the same command resumes them")
    if outcome["failed"] or outcome.get("interrupted"):
        sys.exit(1)
