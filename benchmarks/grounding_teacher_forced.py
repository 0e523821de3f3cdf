"""Teacher-forced grounding losses of grounded checkpoints on real rollouts of any level.

Goal consistency says whether greedy rollouts reach their goals; this says how well a model predicts the
expert's own rollouts of a level it never trained on (``real-easy``: the oracle's data), one KALM task at a
time: the state loss of generation prompts separates "new instruction text disturbs the dynamics" from
"the model picks other actions". Half of the level's rollouts (seeded) are scored, at most ``--batches``
batches of 32 prompts.

    .venv/bin/python benchmarks/grounding_teacher_forced.py CKPT... --env Ball-v0 --level easy [--task generation]
"""

from __future__ import annotations

import argparse
import sys

import lightning as L

from datamodules.grounding_data import GroundingDataModule
from datamodules.grounding_prompts import GROUNDING_TASKS
from imaginebench.levels import LEVELS
from modules.grounding.model import GroundingModule


def teacher_forced_losses(checkpoint: str, env_id: str, level: str, task: str, batches: int) -> dict[str, float]:
    module = GroundingModule.load_from_checkpoint(checkpoint, map_location="cpu")
    module.hparams.explanation_eval_rollouts = 0  # losses only
    data = GroundingDataModule(
        env_id=env_id,
        real_levels=[level],
        val_fraction=0.5,
        val_batches=batches,
        seed=0,
        task_weights={task: 1.0},
        window_steps=module.hparams.get("window_steps"),  # the windows the model was trained on
    )
    trainer = L.Trainer(logger=False, enable_progress_bar=False, enable_model_summary=False, accelerator="cpu")
    (scores,) = trainer.validate(module, data, verbose=False)
    scores = {name.removeprefix("val/"): float(value) for name, value in scores.items()}
    return {name: value for name, value in scores.items() if "/" not in name}  # one task: its own figures repeat


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoints", nargs="+")
    parser.add_argument("--env", required=True, help="env id, e.g. Ball-v0")
    parser.add_argument("--level", required=True, choices=LEVELS, help="whose real rollouts (data/<env>/real-<level>)")
    parser.add_argument("--task", default="generation", choices=GROUNDING_TASKS)
    parser.add_argument("--batches", type=int, default=16)
    args = parser.parse_args(argv)
    for checkpoint in args.checkpoints:
        losses = teacher_forced_losses(checkpoint, args.env, args.level, args.task, args.batches)
        shown = ", ".join(f"{name} {value:.3f}" for name, value in sorted(losses.items()))
        print(f"{checkpoint}: {args.level} {args.task}: {shown}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
