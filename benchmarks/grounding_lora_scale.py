"""Does a grounded model compose better with less of its LoRA adapter? Imagination with the adapter's update scaled.

Weight-space interpolation between a pretrained and a fine-tuned model (WiSE-FT, Wortsman et al. 2022) keeps more of
the pretrained model's robustness off the fine-tuning distribution. With LoRA the interpolation is one number: the
adapter's ``scaling``, times ``alpha`` here (1 is the grounded model, 0 the pretrained backbone under the grounded
slots and heads). Each ``alpha`` imagines the same rollouts of one level and scores them as ``rollout-quality`` does.
With ``--next-states dynamics`` the dynamics read keeps the full adapter by default (``--scale-dynamics`` scales it
too), so only the goal's rollout, which chooses the actions, moves.

    .venv/bin/python benchmarks/grounding_lora_scale.py CKPT --env BabyAI-v0 --level easy \\
        [--rollouts 140] [--alphas 1 0.9 0.8 0.7 0.5] [--next-states dynamics] [--scale-dynamics]
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager

import torch
from peft.tuners.lora import LoraLayer

import modules.grounding.generation as generation
from imaginebench.commands.imagine import imagine_episodes, load_grounded_model
from imaginebench.instructions.encoder import DEFAULT_ENCODER
from imaginebench.rollout_quality import quality_report


class AdapterScale:
    """Scales every LoRA layer's ``scaling`` by a factor, from the values the checkpoint loaded with."""

    def __init__(self, module: torch.nn.Module) -> None:
        self.layers = [layer for layer in module.modules() if isinstance(layer, LoraLayer)]
        if not self.layers:
            raise SystemExit("the checkpoint has no LoRA adapter (grounded with model.finetune: full?)")
        self.loaded = [dict(layer.scaling) for layer in self.layers]
        self.factor = 1.0

    def set(self, factor: float) -> None:
        self.factor = factor
        for layer, loaded in zip(self.layers, self.loaded):
            for name, value in loaded.items():
                layer.scaling[name] = value * factor

    @contextmanager
    def full(self) -> Iterator[None]:
        """The grounded adapter for the duration, then back to the current factor."""
        factor = self.factor
        self.set(1.0)
        try:
            yield
        finally:
            self.set(factor)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkpoint")
    parser.add_argument("--env", required=True)
    parser.add_argument("--level", default="easy")
    parser.add_argument("--rollouts", type=int, default=140)
    parser.add_argument("--alphas", type=float, nargs="+", default=[1.0, 0.9, 0.8, 0.7, 0.5])
    parser.add_argument("--next-states", default="rollout", choices=["rollout", "dynamics"])
    parser.add_argument("--scale-dynamics", action="store_true", help="scale the adapter in the dynamics read too")
    args = parser.parse_args()
    module = load_grounded_model(args.checkpoint)
    scale = AdapterScale(module)
    if not args.scale_dynamics:
        dynamics_next_states = generation.dynamics_next_states

        def full_adapter_dynamics(*inputs):
            with scale.full():
                return dynamics_next_states(*inputs)

        generation.dynamics_next_states = full_adapter_dynamics  # imagine_rollouts looks it up at each step
    print(f"{args.env} {args.level}, {args.rollouts} greedy rollouts, next states from the {args.next_states} read")
    for alpha in args.alphas:
        scale.set(alpha)
        dataset = imagine_episodes(
            module, args.env, args.level, range(args.rollouts), 0, 0.0, 64, DEFAULT_ENCODER, "mean",
            {"kind": "grounded-lm", "seed": 0}, next_states=args.next_states,
        )  # fmt: skip
        report = quality_report(dataset)
        overall, per_task = report["overall"], report["per_task"]
        tasks = ", ".join(
            f"{task} {100 * row['goal_consistency']:.1f} / {100 * row['clean_goal_consistency']:.1f}"
            for task, row in per_task.items()
        )
        one_step = overall["one_step_error_rate"]
        print(
            f"alpha {alpha}: consistency {100 * overall['goal_consistency']:.1f} %, clean "
            f"{100 * overall['clean_goal_consistency']:.1f} %, one-step errors "
            f"{'n/a' if one_step is None else f'{100 * one_step:.1f} %'}; per task (consistency / clean): {tasks}",
            flush=True,
        )


if __name__ == "__main__":
    main()
