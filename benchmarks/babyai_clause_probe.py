"""Why BabyAI's OpenGo and OpenPick fail: the state after the door opens, or the two-clause instruction?

An OpenPick rollout must open the door and then pick something up. Grounded models open it and then toggle it again
(docs/grounding-findings.md). Every train Open episode ends on that toggle, so two causes are possible: the open
door is a state no train rollout continues from, or the model reads "open the door, then pick up ..." as the Open
task. This probe separates them. From the easy level's OpenPick resets, the agent is put in front of the door (open or
closed, as the row says) and the grounded model imagines a rollout under each instruction below. A row reports
how many rollouts reach the named object (go-to rows) or pick something up (the others) within the horizon, and the
share of imagined actions that toggle.

    .venv/bin/python benchmarks/babyai_clause_probe.py CKPT [CKPT ...] [--starts 80] [--next-states dynamics]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import replace

import numpy as np
import torch

from imaginebench import make
from imaginebench.commands.imagine import load_grounded_model
from imaginebench.envs.babyai.layout import DOOR_OPEN, OBJECTS, TOGGLE, World, decode_state, encode_state, manhattan
from imaginebench.envs.babyai.tasks import Goal, is_at
from modules.grounding.generation import imagine_rollouts

HORIZON = 48


def nearest_to_door(world: World) -> str:
    """The object the probe names: the one closest to the cell in front of the door."""
    return min(OBJECTS, key=lambda obj: manhattan(world.positions[obj], world.door_front))


def probe_rows(world: World, easy_instruction: str) -> dict[str, tuple[World, str]]:
    """Start state and instruction of each row, for one reset."""
    opened = replace(world, door_state=DOOR_OPEN, agent=world.door_front)
    closed = replace(world, agent=world.door_front)
    near = nearest_to_door(world)
    named, door = f"the {world.colors[near]} {near}", f"the {world.colors['door']} door"
    return {
        "easy OpenPick instruction, door open": (opened, easy_instruction),
        "'pick up <named>', door closed": (closed, f"pick up {named}"),
        "'pick up <named>', door open": (opened, f"pick up {named}"),
        "'pick up any object', door open": (opened, "pick up any object"),
        "'go to <named>', door closed": (closed, f"go to {named}"),
        "'go to <named>', door open": (opened, f"go to {named}"),
        "'open <door>', door open": (opened, f"open {door}"),
        "'open <door>, then pick up <named>', door open": (opened, f"open {door}, then pick up {named}"),
        "'open <door> and pick up <named>', door open": (opened, f"open {door} and pick up {named}"),
        "'go to <door> and open it, then pick up <named>', door open": (
            opened,
            f"go to {door} and open it, then pick up {named}",
        ),
        "'pick up <named>, then open <door>', door open": (opened, f"pick up {named}, then open {door}"),
    }


def carrying(_: int, states: torch.Tensor) -> bool:
    return decode_state(states[-1].numpy()).carrying is not None


def standing_on(targets: list[str]) -> Callable[[int, torch.Tensor], bool]:
    """GoTo's own success check on the named object of each row."""

    def check(row: int, states: torch.Tensor) -> bool:
        return is_at(decode_state(states[-1].numpy()), Goal("GoTo", (targets[row],)))

    return check


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkpoints", nargs="+")
    parser.add_argument(
        "--starts",
        type=int,
        default=80,
        help="OpenPick resets tried (those with an object on the door's front cell are skipped)",
    )
    parser.add_argument("--next-states", choices=("rollout", "dynamics"), default="dynamics")
    args = parser.parse_args()
    env = make("BabyAI-v0", "easy")
    rows: dict[str, tuple[list[np.ndarray], list[str]]] = {}
    targets: list[str] = []
    for seed in range(args.starts):
        _, info = env.reset(seed=1000 + seed, options={"task": "OpenPick"})
        world = env.unwrapped.world()
        if world.object_at(world.door_front) is not None:
            continue
        targets.append(nearest_to_door(world))
        for name, (start, text) in probe_rows(world, info["instruction"]).items():
            rows.setdefault(name, ([], []))
            rows[name][0].append(encode_state(start))
            rows[name][1].append(text)
    for checkpoint in args.checkpoints:
        module = load_grounded_model(checkpoint)
        print(f"{checkpoint} ({len(targets)} starts, next states from the {args.next_states} read)")
        print(f"  {'instruction, door':60s} {'reached %':>9s} {'toggles %':>9s}")
        for name, (states, texts) in rows.items():
            check = standing_on(targets) if name.startswith("'go to") else carrying
            batch = imagine_rollouts(
                module, texts, torch.tensor(np.stack(states)), check, HORIZON, next_states=args.next_states
            )
            reached = 100 * batch.success.any(1).float().mean().item()
            taken = torch.arange(batch.actions.shape[1]) < batch.lengths[:, None]  # later actions were ignored
            toggles = 100 * ((batch.actions == TOGGLE) & taken).sum().item() / max(int(taken.sum()), 1)
            print(f"  {name:60s} {reached:9.1f} {toggles:9.1f}", flush=True)


if __name__ == "__main__":
    main()
