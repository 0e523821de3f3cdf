"""BabyAI tasks per level: the goals each task draws, its start distribution, its success check.

Success checks are small pure functions of a :class:`~imaginebench.envs.babyai.layout.World` and a
:class:`Goal`, so tests (and code judging imagined states) can call them without an env.

Changes from the original benchmark (docs/original-benchmark.md#babyai, quirks 10-12), so that the expert solves every task
and a uniformly random policy solves at most 20 % of every task within the horizon (measured by
``benchmarks/task_success.py --env BabyAI-v0``; random-policy figures below are for the 48-step horizon):

* colours of all objects and the door are drawn every reset and named by the instruction;
* objects start pairwise apart (never 4-adjacent), the agent on an empty cell;
* the agent starts far from what it must reach: Manhattan distance >= ``FAR`` (6) for GoTo, >=
  ``FAR_THEN_ACT`` (5) for Open, PickUp, OpenGo, OpenPick. With absolute moves a random walk covers
  the 6 × 6 room fast; from a uniform start it reaches a GoTo target in ~29 % of episodes (13 % now);
* OpenPick checks "door open and carrying anything" (the original's inverted check made it unsolvable);
* GoWall names a corner ("go to the north-west corner", where two walls meet), the agent starting
  >= 7 steps from it: the original "any cell next to a wall" was solved 50/50 by chance, and even
  "the north wall" from the far side is reached by a random walk in ~29 % of episodes;
* GoCenter asks to carry a named object to the centre (the middle 2 × 2 cells); the object starts
  outside the middle 4 × 4 and >= 4 steps from the agent: the centre of a 6 × 6 room is at most 4
  steps from anywhere, so merely going there is done by chance in ~64 % of episodes, even from a corner;
* OpenLock's door is locked and has the key's colour;
* PutLine and PutPile never hold at reset.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from itertools import permutations, product

import numpy as np

from imaginebench.envs.babyai.layout import (
    COLORS,
    DOOR_CLOSED,
    DOOR_LOCKED,
    DOOR_OPEN,
    OBJECTS,
    ROOM_CELLS,
    Pos,
    World,
    adjacent,
    manhattan,
)

CENTER: tuple[Pos, ...] = ((3, 3), (4, 3), (3, 4), (4, 4))
"""The middle 2 × 2 cells of the 6 × 6 room (an even-sized room has no single centre cell)."""
CORNERS: dict[str, Pos] = {"north-west": (1, 1), "north-east": (6, 1), "south-west": (1, 6), "south-east": (6, 6)}
FAR = 6
"""Minimum Manhattan distance from the agent's start to the cell GoTo must reach (random policy: ~13 %)."""
FAR_THEN_ACT = 5
"""The same for tasks that must also pick up or toggle there, which a random walk rarely does at the
right moment (Open, PickUp, OpenGo, OpenPick: random <= ~6 %); shorter, so starts are more varied."""


@dataclass(frozen=True)
class Goal:
    """What one episode asks for. ``objects`` are the things the instruction names, in its order
    (``"door"`` too); ``corner`` is GoWall's target corner."""

    task: str
    objects: tuple[str, ...] = ()
    corner: str = ""


# ----------------------------------------------------------------------------- success checks


def goto_cell(world: World, target: str) -> Pos | None:
    """The cell GoTo must reach: the object's own cell, or for the door the cell west of it."""
    return world.door_front if target == "door" else world.positions[target]


def is_at(world: World, goal: Goal) -> bool:
    return world.agent == goto_cell(world, goal.objects[0])


def is_door_open(world: World, goal: Goal) -> bool:
    return world.door_state == DOOR_OPEN


def is_carrying(world: World, goal: Goal) -> bool:
    return world.carrying == goal.objects[0]


def is_next_to(world: World, goal: Goal) -> bool:
    first, second = goal.objects
    return adjacent(world.positions[first], world.positions[second])


def is_door_open_and_on_object(world: World, goal: Goal) -> bool:
    return world.door_state == DOOR_OPEN and world.object_at(world.agent) is not None


def is_door_open_and_carrying_any(world: World, goal: Goal) -> bool:
    return world.door_state == DOOR_OPEN and world.carrying is not None


def is_in_corner(world: World, goal: Goal) -> bool:
    return world.agent == CORNERS[goal.corner]


def is_carried_to_center(world: World, goal: Goal) -> bool:
    return world.carrying == goal.objects[0] and world.agent in CENTER


def is_in_line(world: World, goal: Goal) -> bool:
    cells = [world.positions[obj] for obj in OBJECTS]
    if any(cell is None for cell in cells):
        return False
    return len({x for x, _ in cells}) == 1 or len({y for _, y in cells}) == 1  # type: ignore[misc]


def is_in_pile(world: World, goal: Goal) -> bool:
    """At least two of the three pairs 4-adjacent and not all in one line: an L of three cells."""
    cells = [world.positions[obj] for obj in OBJECTS]
    touching = sum(adjacent(a, b) for a, b in ((cells[0], cells[1]), (cells[0], cells[2]), (cells[1], cells[2])))
    return touching >= 2 and not is_in_line(world, goal)


# ----------------------------------------------------------------------------- start conditions


def _far_from(cell_of: Callable[[World, Goal], Pos | None], distance: int = FAR) -> Callable[[World, Goal], bool]:
    def ok(world: World, goal: Goal) -> bool:
        cell = cell_of(world, goal)
        return cell is not None and manhattan(world.agent, cell) >= distance

    return ok


def _anywhere(world: World, goal: Goal) -> bool:
    return True


def _object_outside_center_far_from_agent(world: World, goal: Goal) -> bool:
    cell = world.positions[goal.objects[0]]
    return cell is not None and min(manhattan(cell, c) for c in CENTER) >= 2 and manhattan(world.agent, cell) >= 4


# ----------------------------------------------------------------------------- task table


@dataclass(frozen=True)
class Task:
    name: str
    success: Callable[[World, Goal], bool]
    goals: tuple[Goal, ...]
    """Drawn uniformly at reset."""
    start_ok: Callable[[World, Goal], bool]
    """Extra condition on the start state (besides objects apart and the goal not yet reached)."""
    door_locked: bool = False
    """The door starts locked and takes the key's colour."""


def _goals(task: str, *objects: tuple[str, ...]) -> tuple[Goal, ...]:
    return tuple(Goal(task, named) for named in objects)


TASKS: dict[str, Task] = {
    task.name: task
    for task in (
        Task(
            "GoTo",
            is_at,
            _goals("GoTo", *[(o,) for o in (*OBJECTS, "door")]),
            _far_from(lambda w, g: goto_cell(w, g.objects[0])),
        ),
        Task("Open", is_door_open, _goals("Open", ("door",)), _far_from(lambda w, g: w.door_front, FAR_THEN_ACT)),
        Task(
            "PickUp",
            is_carrying,
            _goals("PickUp", *[(o,) for o in OBJECTS]),
            _far_from(lambda w, g: w.positions[g.objects[0]], FAR_THEN_ACT),
        ),
        Task("PutNext", is_next_to, _goals("PutNext", *permutations(OBJECTS, 2)), _anywhere),
        Task(
            "OpenGo",
            is_door_open_and_on_object,
            _goals("OpenGo", ("door",)),
            _far_from(lambda w, g: w.door_front, FAR_THEN_ACT),
        ),
        Task(
            "OpenPick",
            is_door_open_and_carrying_any,
            _goals("OpenPick", ("door",)),
            _far_from(lambda w, g: w.door_front, FAR_THEN_ACT),
        ),
        Task(
            "GoWall",
            is_in_corner,
            tuple(Goal("GoWall", corner=c) for c in CORNERS),
            _far_from(lambda w, g: CORNERS[g.corner], 7),
        ),
        Task(
            "GoCenter",
            is_carried_to_center,
            _goals("GoCenter", *[(o,) for o in OBJECTS]),
            _object_outside_center_far_from_agent,
        ),
        Task("OpenLock", is_door_open, _goals("OpenLock", ("key",)), _anywhere, door_locked=True),
        Task("PutLine", is_in_line, _goals("PutLine", OBJECTS), _anywhere),
        Task("PutPile", is_in_pile, _goals("PutPile", OBJECTS), _anywhere),
    )
}

LEVEL_TASKS: dict[str, tuple[str, ...]] = {
    "train": ("GoTo", "Open", "PickUp", "PutNext"),
    "rephrase": ("GoTo", "Open", "PickUp", "PutNext"),
    "easy": ("OpenGo", "OpenPick", "GoWall", "GoCenter"),
    "hard": ("OpenLock", "PutLine", "PutPile"),
}


def is_success(world: World, goal: Goal) -> bool:
    return TASKS[goal.task].success(world, goal)


# ----------------------------------------------------------------------------- instruction slots


def instruction_slots(goal: Goal, colors: Mapping[str, str]) -> dict[str, str]:
    """Values for a template's ``{color} {obj} {color2} {obj2} {color3} {obj3} {ns} {ew}`` fields."""
    slots: dict[str, str] = {}
    for i, obj in enumerate(goal.objects):
        suffix = "" if i == 0 else str(i + 1)
        slots[f"obj{suffix}"], slots[f"color{suffix}"] = obj, colors[obj]
    if goal.corner:
        slots["ns"], slots["ew"] = goal.corner.split("-")
    return slots


def all_instruction_slots(task: str) -> list[dict[str, str]]:
    """Every slot filling the task can produce (each goal × every colour of what it names)."""
    fillings = []
    for goal in TASKS[task].goals:
        for colors in product(COLORS, repeat=len(goal.objects)):
            fillings.append(instruction_slots(goal, dict(zip(goal.objects, colors))))
    return fillings


# ----------------------------------------------------------------------------- start sampling


def _objects_apart(world: World) -> bool:
    cells = list(world.floor_cells().values())
    return all(manhattan(a, b) >= 2 for i, a in enumerate(cells) for b in cells[i + 1 :])


def sample_start(task: str, rng: np.random.Generator) -> tuple[World, Goal]:
    """Draw a goal and a start state of ``task`` (rejection sampling, so fully determined by ``rng``)."""
    spec = TASKS[task]
    goal = spec.goals[int(rng.integers(len(spec.goals)))]
    colors = {name: COLORS[int(rng.integers(len(COLORS)))] for name in (*OBJECTS, "door")}
    if spec.door_locked:
        colors["door"] = colors["key"]
    door_state = DOOR_LOCKED if spec.door_locked else DOOR_CLOSED
    for _ in range(10_000):
        door_row = int(rng.integers(1, 7))
        cells = [ROOM_CELLS[i] for i in rng.choice(len(ROOM_CELLS), size=len(OBJECTS) + 1, replace=False)]
        world = World(colors, dict(zip(OBJECTS, cells[:-1])), door_row, door_state, cells[-1])
        if _objects_apart(world) and spec.start_ok(world, goal) and not spec.success(world, goal):
            return world, goal
    raise RuntimeError(f"BabyAI: could not sample a start state for task {task!r}")
