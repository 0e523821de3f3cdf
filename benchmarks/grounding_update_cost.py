"""CPU seconds per grounding update of a config on this machine, and what the config's full run would cost.

    .venv/bin/python benchmarks/grounding_update_cost.py --config lightning_config/grounding/babyai.yaml \\
        [--steps 20 80] [--threads 1] [-- EXTRA_GROUND_ARGS ...]

Runs ``imaginebench ground`` as child processes, for the two update counts, with validation off, after a 1-update
run that builds what a config's first run builds once (exploration data, the backbone's cached folder); the
difference of their CPU seconds over the difference of their updates leaves out what every run pays once (imports,
data, building the backbone). The full run's planned updates are read from the config file:
``trainer.max_epochs × data.batches_per_epoch``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml
from grounding_variants import run_child  # benchmarks/ is on sys.path


def ground_command(config: str, steps: int, root: str, extra: list[str]) -> list[str]:
    """``imaginebench ground`` stopped after ``steps`` updates, without validation, progress bar or a kept log: only
    the updates' cost should differ between the two runs."""
    return [
        *(sys.executable, "-m", "imaginebench", "ground", "--config", config),
        *("--trainer.max_steps", str(steps), "--trainer.limit_val_batches", "0", "--trainer.num_sanity_val_steps", "0"),
        *("--trainer.enable_progress_bar", "false", "--trainer.logger.init_args.save_dir", root),
        *("--run_name", f"steps{steps}", *extra),
    ]


def planned_updates(path: Path) -> int:
    """The full run's updates, ``trainer.max_epochs × data.batches_per_epoch`` of the config file: checked before
    minutes of measuring, so a bad config fails at once with one line."""
    try:
        config = yaml.safe_load(path.read_text())
    except OSError as error:
        raise SystemExit(f"grounding_update_cost: --config {path}: cannot read it ({error.strerror})") from None
    except yaml.YAMLError as error:
        raise SystemExit(f"grounding_update_cost: --config {path}: not YAML ({' '.join(str(error).split())})") from None
    return config_count(config, path, "trainer", "max_epochs") * config_count(config, path, "data", "batches_per_epoch")


def config_count(config: Any, path: Path, section: str, field: str) -> int:
    """A positive whole number at ``section.field`` of the config, or a one-line exit naming the file and field."""
    value = config.get(section) if isinstance(config, dict) else None
    value = value.get(field) if isinstance(value, dict) else None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise SystemExit(
            f"grounding_update_cost: {path}: {section}.{field} must be a whole number >= 1 (it gives the planned "
            f"updates), got {value!r}"
        )
    return value


def main() -> None:
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1 :] if "--" in argv else []
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--config",
        required=True,
        help="a grounding config, e.g. lightning_config/grounding/clevr.yaml; its trainer.max_epochs × "
        "data.batches_per_epoch are the planned updates of the full run",
    )
    parser.add_argument("--steps", type=int, nargs=2, default=[20, 80], metavar=("FEW", "MORE"))
    parser.add_argument("--threads", type=int, default=1, help="OMP_NUM_THREADS of the runs (the variant table's: 1)")
    args = parser.parse_args(argv[: argv.index("--")] if "--" in argv else argv)
    few, more = args.steps
    if not 0 < few < more:
        raise SystemExit(f"grounding_update_cost: --steps must be two counts 0 < FEW < MORE, got {few} {more}")
    planned = planned_updates(Path(args.config))
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    with tempfile.TemporaryDirectory() as root:
        # What the first run of a config builds once (exploration data, the backbone's cached folder) would otherwise
        # fall into the FEW run and make the difference meaningless (a negative cost per update was measured).
        run_child(ground_command(args.config, 1, root, extra))
        cpu_few, cpu_more = (run_child(ground_command(args.config, steps, root, extra)) for steps in (few, more))
    per_update = (cpu_more - cpu_few) / (more - few)
    if per_update <= 0:
        raise SystemExit(
            f"grounding_update_cost: {more} updates cost no more CPU than {few} ({cpu_more:.1f} against "
            f"{cpu_few:.1f} s): the machine's load moved between the runs; run it again on an idle machine"
        )
    once = cpu_few - few * per_update
    print(f"{args.config} {' '.join(extra)}".strip())
    print(f"  {few} updates: {cpu_few:.1f} CPU s; {more} updates: {cpu_more:.1f} CPU s ({args.threads} thread(s))")
    print(f"  per update: {per_update:.3f} CPU s; paid once per run: {once:.1f} CPU s")
    full_run = (once + planned * per_update) / 60
    print(f"  the {planned} updates planned in {args.config} (max_epochs × batches_per_epoch): {full_run:.1f} CPU min")


if __name__ == "__main__":
    main()
