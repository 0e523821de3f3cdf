"""``imaginebench pipeline``: the whole method for one env, stage by stage, resumable.

collect (real train-level data) → ground (KALM fine-tune) → imagine (rephrase, easy, hard) →
rollout quality → fit (an offline RL algorithm on real + imaginary data) → per-level results.
Each stage leaves its output under ``--out`` and is skipped when that output exists, so an
interrupted pipeline continues where it stopped (ground and fit resume from their last checkpoints).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import get_args

from imaginebench.checkpoints import last_checkpoint
from imaginebench.errors import UserInputError, check_at_least, check_can_create, naming
from imaginebench.levels import IMAGINED_LEVELS
from imaginebench.registry import get_domain, make
from imaginebench.shipped import DEFAULT_NEXT_STATES, NextStateSource, shipped_model


def export_grounded_model(source: Path, destination: Path) -> None:
    """The weights and hyperparameters of a ``ground`` checkpoint, without optimizer and loop state
    (a third of the size; enough for ``imagine``, not for resuming training). Written atomically."""
    import torch

    from imaginebench.storage import atomic_torch_save

    checkpoint = torch.load(source, map_location="cpu", weights_only=False)
    training_state = ("optimizer_states", "lr_schedulers", "loops", "callbacks")
    atomic_torch_save({k: v for k, v in checkpoint.items() if k not in training_state}, destination)


REAL_TRAIN_DATA = ("--data.real", "[]", "--data.real_levels", "[train]")
"""Both trainings use exactly the real data of stage 1 (the default train dataset), whatever their configs list."""


def resume_if_started(run_dir: Path) -> list[str]:
    """``--ckpt_path last`` when an earlier pipeline left a checkpoint in ``run_dir``: a fresh run there is refused."""
    return ["--ckpt_path", "last"] if last_checkpoint(run_dir).is_file() else []


def shipped_next_states(env_id: str) -> NextStateSource:
    """Where the env's shipped data read their next states (``rollout`` when it ships no model): the pipeline imagines
    as the shipped data were imagined unless ``--next-states`` says otherwise."""
    shipped = shipped_model(env_id)
    return shipped.next_states if shipped else DEFAULT_NEXT_STATES


DEFAULT_ROLLOUTS = 700


def rollouts_per_level(env_id: str, rollouts: int | None) -> dict[str, int]:
    """``--rollouts`` for every novel level, else as many per level as the env's shipped data hold (700 each when it
    ships no model), so that the pipeline's data compare with the shipped data."""
    if rollouts is not None:
        return dict.fromkeys(IMAGINED_LEVELS, rollouts)
    shipped = shipped_model(env_id)
    return shipped.rollouts if shipped else dict.fromkeys(IMAGINED_LEVELS, DEFAULT_ROLLOUTS)


def _stage(number: int, name: str, message: str) -> None:
    print(f"[pipeline {number}/6] {name}: {message}", flush=True)


def pipeline_main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="imaginebench pipeline", description=__doc__.splitlines()[0])
    parser.add_argument("--env", required=True, help="env id, e.g. BabyAI-v0")
    parser.add_argument(
        "--algo",
        default="bc",
        help="offline RL config name under lightning_config/<env>/ (bc, discrete_cql, td3_bc, ...)",
    )
    parser.add_argument("--out", help="working directory (default runs/pipeline/<env>)")
    parser.add_argument(
        "--real-episodes", type=int, help="expert episodes of the train tasks (default: the domain's real_episodes)"
    )
    parser.add_argument(
        "--rollouts",
        type=int,
        help="imaginary rollouts per level (default: as many as the env's shipped data hold, "
        "assets/<env>/imagination.json; 700 where it ships none)",
    )
    parser.add_argument(
        "--mix-ratio-real", type=float, default=0.5, help="share of real rows per batch (ImagineBench: 0.5)"
    )
    parser.add_argument("--grounding-config", help="default lightning_config/grounding/<env>.yaml")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--temperature", type=float, default=0.0)
    parser.add_argument(
        "--next-states",
        choices=get_args(NextStateSource),
        help="where imagined next states are read (default: as the env's shipped imagination.json says, else rollout)",
    )
    parser.add_argument("--device", default=None, help="device for imagination (default: cuda if available)")
    parser.add_argument(
        "--lightning-args",
        nargs=argparse.REMAINDER,
        default=[],
        help="extra arguments for the final `fit` (last on the line)",
    )
    args = parser.parse_args(argv)
    run_pipeline(args)


def run_pipeline(args: argparse.Namespace) -> Path:
    import torch

    from imaginebench.collect import collect
    from imaginebench.commands.imagine import imagine
    from imaginebench.commands.lightning_cli import run_grounding_cli, run_lightning_cli
    from imaginebench.datasets import load_episodes
    from imaginebench.datasets.locations import default_dataset_dir
    from imaginebench.processes import available_cores
    from imaginebench.rollout_quality import format_quality_table, quality_report, write_quality_report
    from imaginebench.stage_costs import StageCosts, format_stage_costs

    with naming("--env"):
        domain = get_domain(args.env)
    configs = Path("lightning_config")
    algo_config = configs / domain.config_dir / f"{args.algo}.yaml"
    grounding_config = Path(args.grounding_config or domain.grounding_config)
    for path, option in ((algo_config, "--algo"), (grounding_config, "--grounding-config")):
        if not path.is_file():
            raise UserInputError(f"{option}: {path} does not exist")
    check_at_least(1, {"--rollouts": args.rollouts, "--real-episodes": args.real_episodes})
    if not 0 <= args.mix_ratio_real <= 1:
        raise UserInputError(f"--mix-ratio-real must lie in [0, 1], got {args.mix_ratio_real}")
    with naming("--env"):
        make(args.env).close()  # every stage but ground steps the simulator: a missing extra fails now, not after it
    out = Path(args.out or Path("runs") / "pipeline" / args.env)
    if not out.exists():
        check_can_create(out, "--out")
    out.mkdir(parents=True, exist_ok=True)
    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    costs = StageCosts(out, args.env)

    real = default_dataset_dir(args.env, "real", "train")
    if real.exists():
        _stage(1, "collect", f"{real} exists, kept")
    else:
        episodes = domain.real_episodes if args.real_episodes is None else args.real_episodes
        _stage(1, "collect", f"{episodes} expert episodes → {real}")
        workers = available_cores()
        with costs.measure("collect", f"{episodes} episodes, workers: {workers}"):
            collect(args.env, "train", episodes, real, seed=args.seed, workers=workers)

    checkpoint = out / "grounding.ckpt"
    if checkpoint.exists():
        _stage(2, "ground", f"{checkpoint} exists, kept")
    else:
        _stage(2, "ground", f"{grounding_config} → {checkpoint}")
        resume = resume_if_started(out / "grounding" / "run")
        with costs.measure("ground", f"{grounding_config} on {device}", resumed=bool(resume)):
            run_grounding_cli(
                [
                    "--config",
                    str(grounding_config),
                    *REAL_TRAIN_DATA,
                    "--seed_everything",
                    str(args.seed),
                    "--trainer.logger.init_args.save_dir",
                    str(out),
                    "--trainer.logger.init_args.name",
                    "grounding",
                    "--run_name",
                    "run",
                    *resume,
                ]
            )
            export_grounded_model(last_checkpoint(out / "grounding" / "run"), checkpoint)

    next_states = args.next_states or shipped_next_states(args.env)
    rollouts = rollouts_per_level(args.env, args.rollouts)
    imaginary = []
    for level in IMAGINED_LEVELS:
        path = out / f"imaginary-{level}"
        imaginary.append(path)
        if path.exists():
            _stage(3, "imagine", f"{path} exists, kept")
            continue
        _stage(3, "imagine", f"{rollouts[level]} rollouts of {level}, next states from the {next_states} → {path}")
        with costs.measure(f"imagine {level}", f"{rollouts[level]} rollouts on {device}, next states: {next_states}"):
            imagine(
                checkpoint,
                args.env,
                level,
                rollouts[level],
                path,
                seed=args.seed,
                temperature=args.temperature,
                device=device,
                next_states=next_states,
            )

    _stage(4, "quality", f"replaying the rollouts in the simulator → {out / 'quality.json'}")
    with costs.measure("rollout quality", f"{len(imaginary)} levels replayed"):
        reports = [quality_report(load_episodes(path), progress=True) for path in imaginary]
        write_quality_report(reports, out / "quality.json")
    print(format_quality_table(reports))

    name = f"{args.algo}-real+imaginary"
    _stage(5, "fit", f"{algo_config} on real + imaginary data → {out / name}")
    resume = resume_if_started(out / name / "run")
    with costs.measure(f"fit {args.algo}", f"{algo_config}, evaluation included", resumed=bool(resume)):
        run_lightning_cli(
            [
                "fit",
                "--config",
                str(algo_config),
                *args.lightning_args,
                *REAL_TRAIN_DATA,
                "--data.imaginary",
                json.dumps([str(p) for p in imaginary]),
                "--data.imaginary_levels",
                "[]",
                "--data.mix_ratio_real",
                str(args.mix_ratio_real),
                "--seed_everything",
                str(args.seed),
                "--trainer.logger.init_args.save_dir",
                str(out),
                "--trainer.logger.init_args.name",
                name,
                "--run_name",
                "run",
                *resume,
            ]
        )

    results = out / name / "run" / "results.json"
    _stage(6, "results", str(results))
    levels = json.loads(results.read_text())["levels"]
    for level, result in levels.items():
        print(f"  {level:<10}{result['success_rate']:>8.1%}")
    print(f"cost of each stage ({costs.path}):")
    print(format_stage_costs(costs.content))
    return results
