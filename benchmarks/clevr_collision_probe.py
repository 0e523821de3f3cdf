"""How learnable CLEVR-Robot's collisions are from its real data, by input encoding (issue: grounded models never
imagine a push moving a second ball).

    .venv/bin/python benchmarks/clevr_collision_probe.py [--data data/Ball-v0/real-train] [--updates 10000]

A classifier trained directly on the real transitions predicts, for every ball other than the pushed one,
whether the push moves it (by more than the env's 0.02 tolerance). It is an upper bound of sorts for what a
grounded model's state head has to learn about collisions, without language, sequences or the other KALM tasks.
Three encodings of the same transitions, the same seeded MLP for each (2 × 256 ReLU, Adam 1e-3, batch 256),
90/10 split of the transitions:

- ``flat``: the standardised 10 coordinates, the one-hot action and which ball is asked about (what a grounding
  model's slots carry);
- ``flat + pairwise``: also every ball-to-ball offset;
- ``push frame``: per other ball, its offset from the pushed ball along and across the push direction and on the
  table's axes, both balls' positions and the direction (``imaginebench.envs.clevr.push_frame``, what a grounding
  model with ``model.action_frame: clevr-push`` reads).

Prints the hit recall (moved balls predicted to move) and false-hit rate (still balls predicted to move) on the
held-out transitions, every 2,000 updates.
"""

from __future__ import annotations

import argparse

import torch
from torch import Tensor, nn

from imaginebench.datasets.episodes import load_episodes
from imaginebench.envs.clevr.layout import DIRECTIONS, NUM_ACTIONS, NUM_BALLS
from imaginebench.envs.clevr.push_frame import push_frame

TOLERANCE = 0.02


def encodings(state: Tensor, next_state: Tensor, action: Tensor) -> tuple[dict[str, Tensor], Tensor, Tensor]:
    """Per encoding, a ``(transitions, NUM_BALLS, features)`` input; whether each ball moved; which is pushed."""
    balls, after = state.view(-1, NUM_BALLS, 2), next_state.view(-1, NUM_BALLS, 2)
    moved = (after - balls).norm(dim=-1) > TOLERANCE
    pushed = action // len(DIRECTIONS)

    def per_ball(features: Tensor) -> Tensor:
        return features[:, None].expand(-1, NUM_BALLS, -1)

    flat = torch.cat([(state - state.mean(0)) / state.std(0), nn.functional.one_hot(action, NUM_ACTIONS)], -1)
    pairwise = (balls[:, :, None] - balls[:, None]).flatten(1)
    pairwise = (pairwise - pairwise.mean(0)) / pairwise.std(0).clamp_min(1e-6)
    ball_id = torch.eye(NUM_BALLS).expand(len(action), -1, -1)  # which ball a row asks about
    return (
        {
            "flat": torch.cat([per_ball(flat), ball_id], -1),
            "flat + pairwise": torch.cat([per_ball(torch.cat([flat, pairwise], -1)), ball_id], -1),
            "push frame": push_frame(state, action),
        },
        moved,
        pushed,
    )


def probe(name: str, inputs: Tensor, moved: Tensor, other: Tensor, updates: int) -> None:
    torch.manual_seed(0)
    x, y = inputs[other], moved[other].float()
    order = torch.randperm(len(x))
    train, test = order[: int(0.9 * len(x))], order[int(0.9 * len(x)) :]
    width = 256
    layers = [nn.Linear(x.shape[-1], width), nn.ReLU(), nn.Linear(width, width), nn.ReLU()]
    network = nn.Sequential(*layers, nn.Linear(width, 1))
    optimizer = torch.optim.Adam(network.parameters(), 1e-3)
    for update in range(1, updates + 1):
        batch = train[torch.randint(len(train), (256,))]
        loss = nn.functional.binary_cross_entropy_with_logits(network(x[batch]).squeeze(-1), y[batch])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if update % 2000 == 0:
            with torch.no_grad():
                hit, truth = network(x[test]).squeeze(-1) > 0, y[test].bool()
            recall = (hit & truth).sum() / truth.sum()
            false_hits = (hit & ~truth).sum() / (~truth).sum()
            print(f"{name:16} {update:6d} updates: hit recall {recall:.3f}, false hits {false_hits:.4f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="data/Ball-v0/real-train")
    parser.add_argument("--updates", type=int, default=10_000)
    args = parser.parse_args()
    torch.set_num_threads(1)
    steps = load_episodes(args.data).steps
    action = steps["action"].view(-1).long()
    inputs, moved, pushed = encodings(steps["state"].float(), steps["next_state"].float(), action)
    other = torch.ones_like(moved)
    other[torch.arange(len(action)), pushed] = False
    print(f"{len(action)} transitions; {moved[other].float().mean():.1%} of the other balls move (hits)")
    for name, features in inputs.items():
        probe(name, features, moved, other, args.updates)


if __name__ == "__main__":
    main()
