"""``imaginebench sweep``: a grid of ``fit`` runs (config × data variant × seed) on Ray Tune.

Ray schedules the cells (a local Ray using ``--workers`` CPUs, or a running cluster with ``--address``); each
cell is one ``imaginebench fit`` in its own process with ``--threads`` intra-op threads, writing its run directory
``<out>/<cell>/seed<S>`` (what ``imaginebench report`` groups over seeds). Whether a cell is finished is read from
its directory, not from Ray's state: a finished cell (``cell.json`` beside its ``results.json``) is never run
again, an interrupted one resumes from its last checkpoint (``--ckpt_path last``), so running the same command
after an interruption continues where it stopped, on the same or another Ray. A failed cell is reported with its
log and the others go on.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from imaginebench.checkpoints import last_checkpoint
from imaginebench.errors import UserInputError
from imaginebench.processes import CORES_VARIABLE
from imaginebench.provenance import REPOSITORY, source_commit
from imaginebench.storage import atomic_write_text

DONE_FILE = "cell.json"


@dataclass(frozen=True)
class Cell:
    """One ``fit``: ``config`` with the variant's and the sweep's options, at one seed."""

    name: str
    config: str
    variant: str
    seed: int
    options: list[str] = field(default_factory=list)

    def run_dir(self, out: Path) -> Path:
        return out / self.name / f"seed{self.seed}"

    def fit_arguments(self, out: Path, resume: bool) -> list[str]:
        return [
            "fit",
            "--config",
            self.config,
            *self.options,
            "--seed_everything",
            str(self.seed),
            "--trainer.logger.init_args.save_dir",
            str(out),
            "--trainer.logger.init_args.name",
            self.name,
            "--run_name",
            f"seed{self.seed}",
            *(["--ckpt_path", "last"] if resume else []),
        ]


@dataclass(frozen=True)
class Sweep:
    out: Path
    cells: list[Cell]
    prepare: list[list[str]]


def read_sweep(path: Path, out: str | None = None) -> Sweep:
    """The grid of a sweep file: ``configs`` × ``variants`` (name → fit options) × ``seeds``, plus ``options``
    common to every cell (given first, so a variant's own options override them) and ``prepare`` commands run once before (each skipped when its ``--out`` exists)."""
    if not path.is_file():
        raise UserInputError(f"--config: {path} does not exist")
    spec = yaml.safe_load(path.read_text()) or {}
    unknown = set(spec) - {"configs", "variants", "seeds", "options", "prepare", "out"}
    if unknown:
        raise UserInputError(f"{path}: unknown fields {sorted(unknown)}")
    for name, kind in (("configs", list), ("variants", dict), ("seeds", list)):
        if not isinstance(spec.get(name), kind) or not spec[name]:
            raise UserInputError(f"{path}: field {name!r} must be a non-empty {kind.__name__}")
    configs = []
    for config in spec["configs"]:
        found = [place for place in (Path(config), REPOSITORY / config) if place.is_file()]
        if not found:
            raise UserInputError(f"{path}: configs: {config} does not exist")
        configs.append(str(found[0].resolve()))
    for name, options in [("options", spec.get("options", [])), *spec["variants"].items()]:
        if not isinstance(options or [], list):
            raise UserInputError(f"{path}: {name}: options must be a list of command-line words, got {options!r}")
    common = [str(option) for option in spec.get("options", [])]
    cells = [
        Cell(
            name=f"{Path(config).parent.name}-{Path(config).stem}-{variant}",
            config=config,
            variant=variant,
            seed=int(seed),
            options=common + [str(option) for option in (options or [])],  # the variant's own options win
        )
        for config in configs
        for variant, options in spec["variants"].items()
        for seed in spec["seeds"]
    ]
    prepare = [[str(word) for word in command] for command in spec.get("prepare", [])]
    return Sweep(Path(out or spec.get("out") or Path("runs") / "sweeps" / path.stem).resolve(), cells, prepare)


def is_finished(cell: Cell, out: Path) -> bool:
    return (cell.run_dir(out) / DONE_FILE).is_file()


def run_cell(cell: Cell, out: Path, threads: int) -> dict[str, Any]:
    """Run (or resume) one cell in a fresh process; return its per-level success. Raises on failure."""
    run_dir = cell.run_dir(out)
    resume = last_checkpoint(run_dir).is_file()
    log = out / "logs" / f"{cell.name}-seed{cell.seed}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    environment = {
        **os.environ,
        "OMP_NUM_THREADS": str(threads),
        "MKL_NUM_THREADS": str(threads),
        CORES_VARIABLE: str(threads),  # the cell's evaluation and collection workers
    }
    command = [sys.executable, "-m", "imaginebench", *cell.fit_arguments(out, resume)]
    started, commit = time.time(), source_commit()
    with log.open("a") as handle:
        handle.write(f"$ {' '.join(command)}\n")
        handle.flush()
        status = subprocess.run(command, cwd=REPOSITORY, env=environment, stdout=handle, stderr=subprocess.STDOUT)
    if status.returncode != 0:
        raise RuntimeError(f"{cell.name} seed {cell.seed} failed (exit {status.returncode}); see {log}")
    results = json.loads((run_dir / "results.json").read_text())
    success = {f"success/{level}": entry["success_rate"] for level, entry in results["levels"].items()}
    record = {
        **asdict(cell),
        "command": command[2:],
        "commit": commit,
        "minutes": round((time.time() - started) / 60, 2),
        **success,
    }
    atomic_write_text(json.dumps(record, indent=2), run_dir / DONE_FILE)
    return success


def prepare(commands: list[list[str]]) -> None:
    """Run each ``prepare`` command once: skipped when the path after its ``--out`` exists."""
    for command in commands:
        target = command[command.index("--out") + 1] if "--out" in command[:-1] else None
        if target is not None and (REPOSITORY / target).exists():
            continue
        print(f"prepare: imaginebench {' '.join(command)}", flush=True)
        status = subprocess.run([sys.executable, "-m", "imaginebench", *command], cwd=REPOSITORY)
        if status.returncode != 0:
            raise UserInputError(f"prepare: `imaginebench {' '.join(command)}` failed (exit {status.returncode})")


def run_sweep(sweep: Sweep, workers: int, threads: int, address: str | None) -> dict[str, list[str]]:
    """Run every unfinished cell on Ray Tune; returns the cells by outcome (``done``, ``skipped``, ``failed``, and
    ``interrupted``: stopped before finishing, e.g. by Ctrl-C, and resumed by the next run)."""
    prepare(sweep.prepare)
    pending = [cell for cell in sweep.cells if not is_finished(cell, sweep.out)]
    outcome: dict[str, list[str]] = {"skipped": [f"{c.name}/seed{c.seed}" for c in sweep.cells if c not in pending]}
    outcome.update(done=[], failed=[], interrupted=[])
    print(
        f"sweep {sweep.out}: {len(sweep.cells)} cells, {len(outcome['skipped'])} finished before, {len(pending)} to run"
    )
    if not pending:
        return outcome
    import ray
    from ray import tune

    def trainable(config: dict[str, Any]) -> None:
        tune.report(run_cell(Cell(**config["cell"]), Path(config["out"]), config["threads"]))

    ray.init(address=address, num_cpus=None if address else workers * threads, include_dashboard=False)
    try:
        tuner = tune.Tuner(
            tune.with_resources(trainable, {"cpu": threads}),
            param_space={
                "cell": tune.grid_search([asdict(cell) for cell in pending]),
                "out": str(sweep.out),
                "threads": threads,
            },
            tune_config=tune.TuneConfig(max_concurrent_trials=workers),
            run_config=tune.RunConfig(
                name=f"ray-{int(time.time())}",
                storage_path=str(sweep.out / ".ray"),
                failure_config=tune.FailureConfig(max_failures=0, fail_fast=False),
                verbose=1,
            ),
        )
        results = tuner.fit()
    finally:
        ray.shutdown()
    for result in results:
        cell = Cell(**result.config["cell"])
        label = f"{cell.name}/seed{cell.seed}"
        finished = is_finished(cell, sweep.out)
        outcome["failed" if result.error is not None else "done" if finished else "interrupted"].append(label)
        if result.error is not None:
            print(f"FAILED {label}: {str(result.error).splitlines()[-1]}", flush=True)
    return outcome
