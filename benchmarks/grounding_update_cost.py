"""CPU seconds per grounding update of a config on this machine, and what the config's full run would cost.

    .venv/bin/python benchmarks/grounding_update_cost.py --config lightning_config/grounding/babyai.yaml \\
        [--steps 20 80] [--threads 1] [-- EXTRA_GROUND_ARGS ...]

Runs ``imaginebench ground`` twice as child processes, for the two update counts, with validation off; the
difference of their CPU seconds over the difference of their updates leaves out what a run pays once (imports,
data, building the backbone). The full run's updates are the config's ``max_epochs × batches_per_epoch``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

import yaml
from grounding_variants import run_child  # benchmarks/ is on sys.path


def ground_command(config: str, steps: int, root: str, extra: list[str]) -> list[str]:
    return [
        *(sys.executable, "-m", "imaginebench", "ground", "--config", config),
        *("--trainer.max_steps", str(steps), "--trainer.limit_val_batches", "0", "--trainer.num_sanity_val_steps", "0"),
        *("--trainer.enable_progress_bar", "false", "--trainer.logger.init_args.save_dir", root),
        *("--run_name", f"steps{steps}", *extra),
    ]


def main() -> None:
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1 :] if "--" in argv else []
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--config", required=True, help="a grounding config, e.g. lightning_config/grounding/clevr.yaml"
    )
    parser.add_argument("--steps", type=int, nargs=2, default=[20, 80], metavar=("FEW", "MORE"))
    parser.add_argument("--threads", type=int, default=1, help="OMP_NUM_THREADS of the runs (the variant table's: 1)")
    args = parser.parse_args(argv[: argv.index("--")] if "--" in argv else argv)
    few, more = args.steps
    if not 0 < few < more:
        raise SystemExit(f"grounding_update_cost: --steps must be two counts 0 < FEW < MORE, got {few} {more}")
    config = yaml.safe_load(open(args.config))
    planned = config["trainer"]["max_epochs"] * config["data"]["batches_per_epoch"]
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    with tempfile.TemporaryDirectory() as root:
        cpu_few, cpu_more = (run_child(ground_command(args.config, steps, root, extra)) for steps in (few, more))
    per_update = (cpu_more - cpu_few) / (more - few)
    once = cpu_few - few * per_update
    print(f"{args.config} {' '.join(extra)}".strip())
    print(f"  {few} updates: {cpu_few:.1f} CPU s; {more} updates: {cpu_more:.1f} CPU s ({args.threads} thread(s))")
    print(f"  per update: {per_update:.3f} CPU s; paid once per run: {once:.1f} CPU s")
    print(f"  the config's {planned} updates: {(once + planned * per_update) / 60:.1f} CPU min")


if __name__ == "__main__":
    main()
