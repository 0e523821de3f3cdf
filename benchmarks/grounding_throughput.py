"""Grounding throughput on this machine: fine-tune updates/s (LoRA and full) and imagination
rollouts/s with and without the KV cache, for the default BabyAI backbone.

    .venv/bin/python benchmarks/grounding_throughput.py [--steps 20] [--rollouts 64] [--device cpu]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from datamodules.grounding_data import GroundingDataModule
from imaginebench.collect import episode_seed
from imaginebench.registry import make
from modules.grounding.generation import imagine_rollouts
from modules.grounding.model import GroundingModule


def fine_tune_rate(datamodule: GroundingDataModule, finetune: str, steps: int, device: str) -> float:
    module = GroundingModule(
        datamodule.env_spec, vocabulary=datamodule.vocabulary, finetune=finetune, round_states=True
    ).to(device)
    optimizer = torch.optim.AdamW([p for p in module.parameters() if p.requires_grad], lr=1e-3)
    batches = [
        module.on_before_batch_transfer(b, 0) for b in datamodule._batches(datamodule.train_rollouts, (0,), steps + 2)
    ]
    batches = [{k: v.to(device) for k, v in b.items()} for b in batches]
    for index, batch in enumerate(batches):
        if index == 2:  # two warm-up steps
            start = time.perf_counter()
        optimizer.zero_grad()
        module.losses(batch)["total"].backward()
        optimizer.step()
    return steps / (time.perf_counter() - start)


def imagination_rate(module: GroundingModule, rollouts: int, use_cache: bool) -> tuple[float, float]:
    """Rollouts/s and generated steps/s over ``rollouts`` easy-level goals, in one batch."""
    envs = [make("BabyAI-v0", "easy") for _ in range(rollouts)]
    starts, instructions = [], []
    for index, env in enumerate(envs):
        observation, info = env.reset(seed=episode_seed(0, index), options={"task": env.tasks[index % len(env.tasks)]})
        starts.append(torch.from_numpy(observation["state"]))
        instructions.append(info["instruction"])
    start = time.perf_counter()
    batch = imagine_rollouts(
        module,
        instructions,
        torch.stack(starts),
        lambda row, s: bool(envs[row].success_flags(s.numpy())[-1]),
        horizon=envs[0].horizon,
        use_cache=use_cache,
    )
    elapsed = time.perf_counter() - start
    return rollouts / elapsed, float(batch.lengths.sum()) / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--rollouts", type=int, default=64)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = parser.parse_args()
    datamodule = GroundingDataModule("BabyAI-v0", real_levels=["train"], max_episodes=5000, batch_size=32)
    datamodule.setup()
    lengths = [len(r.actions) for r in datamodule.train_rollouts]
    print(f"BabyAI real rollouts: mean length {np.mean(lengths):.1f} steps; batch 32; default backbone (Llama 4 x 128)")
    for finetune in ("lora", "full"):
        print(f"fine-tune {finetune:<5} {fine_tune_rate(datamodule, finetune, args.steps, args.device):7.2f} updates/s")
    module = (
        GroundingModule(datamodule.env_spec, vocabulary=datamodule.vocabulary, round_states=True).to(args.device).eval()
    )
    for use_cache in (True, False):
        per_rollout, per_step = imagination_rate(module, args.rollouts, use_cache)
        label = "KV cache" if use_cache else "no cache"
        print(
            f"imagine {label:<9} {per_rollout:7.2f} rollouts/s {per_step:8.1f} steps/s (an untrained model runs to the 48-step horizon)"
        )


if __name__ == "__main__":
    main()
