"""Does a grounded CLEVR-Robot model imagine collisions? Two views of one checkpoint.

    .venv/bin/python benchmarks/clevr_collisions.py CHECKPOINT [--imagined DIR ...] [--data data/Ball-v0/real-train]

- **Teacher-forced**, on real transitions as dynamics prompts (``State: s Action: a Next state:``): the probability
  the state head gives a ball of moving (1 - its zero-change bin, the larger of its two coordinates) for balls the
  push hit, for balls it did not, and the share of hit balls whose argmax change is not zero.
- **Imagined** (each ``--imagined`` directory, from ``imaginebench imagine``): every generated transition that starts
  from a legal state is replayed in the simulator; counted: pushes that move a second ball there (hits), hits where
  the model moved one too, and transitions within the env's tolerance, for free pushes and hits apart.
"""

from __future__ import annotations

import argparse

import numpy as np
import torch

from imaginebench.commands.imagine import load_grounded_model
from imaginebench.datasets.episodes import load_episodes
from imaginebench.envs.clevr.env import ClevrEnv
from imaginebench.envs.clevr.layout import DIRECTIONS, NUM_BALLS, state_violations
from imaginebench.envs.clevr.physics import Table

TOLERANCE = ClevrEnv.state_tolerance
TRANSITIONS = 600


def moved_balls(states: torch.Tensor, next_states: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
    """``(N, NUM_BALLS)``: which balls other than the pushed one moved by more than the tolerance."""
    moved = (next_states - states).view(-1, NUM_BALLS, 2).norm(dim=-1) > TOLERANCE
    moved[torch.arange(len(actions)), actions // len(DIRECTIONS)] = False
    return moved


@torch.no_grad()
def teacher_forced(checkpoint: str, data: str) -> None:
    module = load_grounded_model(checkpoint).eval()
    steps = load_episodes(data).steps
    states, actions, next_states = steps["state"], steps["action"].view(-1).long(), steps["next_state"]
    moved = moved_balls(states, next_states, actions)
    rows = torch.cat([moved.any(1).nonzero().flatten()[: TRANSITIONS // 2], (~moved.any(1)).nonzero().flatten()])
    rows = rows[:TRANSITIONS]
    batch = module.builder.collate([module.builder.dynamics(states[i], actions[i], next_states[i]) for i in rows])
    hidden = module.decode(module.embed(batch), batch["attention_mask"]).last_hidden_state.float()
    before_last = batch["attention_mask"].sum(1) - 2  # the slot that predicts the next state
    logits = module.state_head(hidden[torch.arange(len(rows)), before_last]).unflatten(1, (NUM_BALLS, 2))
    still = module.state_head.half
    p_move = (1 - logits.softmax(-1)[..., still]).amax(-1)
    argmax_moves = (logits.argmax(-1) != still).any(-1)
    hit = moved[rows]
    untouched = ~hit
    untouched[torch.arange(len(rows)), actions[rows] // len(DIRECTIONS)] = False
    print(
        f"teacher-forced on {len(rows)} real transitions ({int(hit.sum())} hit balls): P(move) of a hit ball "
        f"{p_move[hit].mean():.3f} (> 0.5 for {(p_move[hit] > 0.5).float().mean():.1%}), of an untouched ball "
        f"{p_move[untouched].mean():.3f}; argmax moves {argmax_moves[hit].float().mean():.1%} of hit balls and "
        f"{argmax_moves[untouched].float().mean():.1%} of untouched ones"
    )


def replayed(directory: str) -> None:
    table = Table()
    steps = load_episodes(directory).steps
    states, actions, generated = steps["state"], steps["action"].view(-1).long(), steps["next_state"]
    legal = torch.tensor([not state_violations(state) for state in states.numpy()])
    states, actions, generated = states[legal], actions[legal], generated[legal]
    simulated = []
    for state, action in zip(states.numpy(), actions.tolist()):
        table.set_positions(state.reshape(NUM_BALLS, 2))
        simulated.append(table.push(action).reshape(-1))
    simulated = torch.as_tensor(np.stack(simulated), dtype=generated.dtype)
    hit = moved_balls(states, simulated, actions).any(1)
    model_moved = moved_balls(states, generated, actions).any(1)
    right = (simulated - generated).abs().amax(1) <= TOLERANCE
    print(
        f"{directory}: {len(states)} transitions from legal states; free pushes {int((~hit).sum())} "
        f"({int((right & ~hit).sum())} right, {int((model_moved & ~hit).sum())} moved a second ball); hits "
        f"{int(hit.sum())} (the model moved a second ball in {int((model_moved & hit).sum())}, "
        f"{int((right & hit).sum())} right)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoint")
    parser.add_argument("--imagined", nargs="*", default=[])
    parser.add_argument("--data", default="data/Ball-v0/real-train")
    args = parser.parse_args()
    torch.set_num_threads(1)
    teacher_forced(args.checkpoint, args.data)
    for directory in args.imagined:
        replayed(directory)


if __name__ == "__main__":
    main()
