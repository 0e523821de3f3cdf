"""A reference for a grounded model's one-step dynamics: how well a plain MLP on (state, action) predicts the change.

Model-based RL builds its dynamics models this way (MBPO, PETS). The figure printed is in the unit of the grounding
state loss of a regressed change without ``standardize_changes``: the mean square of (next state − state) divided by
the training states' spread, so it sits beside ``benchmarks/grounding_teacher_forced.py``'s ``loss_state``. Trained on
TRAIN's transitions (seeded), scored on TEST's (e.g. the real rollouts of the rephrase level).

    .venv/bin/python benchmarks/dynamics_mlp_reference.py data/Mujoco-v0/real-train data/Mujoco-v0/real-rephrase [--updates 4000]
"""

from __future__ import annotations

import argparse

import torch
from torch import Tensor, nn

from imaginebench.datasets import load_episodes


def transitions(path: str) -> tuple[Tensor, Tensor, Tensor]:
    steps = load_episodes(path).steps
    return steps["state"].float(), steps["action"].float(), steps["next_state"].float()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("train")
    parser.add_argument("test")
    parser.add_argument("--updates", type=int, default=4000)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    states, actions, next_states = transitions(args.train)
    if actions.dim() == 1:
        raise SystemExit("dynamics_mlp_reference: continuous actions only (a discrete env's states are whole numbers)")
    mean, spread = states.mean(0), states.std(0).clamp_min(1e-6)

    def inputs(s: Tensor, a: Tensor) -> Tensor:
        return torch.cat([(s - mean) / spread, a], dim=-1)

    x, y = inputs(states, actions), (next_states - states) / spread
    mlp = nn.Sequential(
        nn.Linear(x.shape[1], 256), nn.GELU(), nn.Linear(256, 256), nn.GELU(), nn.Linear(256, y.shape[1])
    )
    optimizer = torch.optim.Adam(mlp.parameters(), lr=1e-3)
    for update in range(1, args.updates + 1):
        rows = torch.randint(len(x), (args.batch_size,))
        loss = (mlp(x[rows]) - y[rows]).square().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if update % 1000 == 0 or update == args.updates:
            print(f"update {update}: train batch loss {loss.item():.4f}", flush=True)
    test_states, test_actions, test_next = transitions(args.test)
    target = (test_next - test_states) / spread
    with torch.no_grad():
        error = (mlp(inputs(test_states, test_actions)) - target).square()
    print(
        f"{args.test}: one-step state loss {error.mean().item():.4f} (predicting no change: "
        f"{target.square().mean().item():.4f}); per dimension " + " ".join(f"{v:.4f}" for v in error.mean(0).tolist())
    )


if __name__ == "__main__":
    main()
