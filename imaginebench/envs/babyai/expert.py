"""Scripted BabyAI expert: BFS shortest paths on the grid, then pick up, toggle or drop.

The expert keeps no state: every step it replans from the current world. For the rearranging tasks
(PutNext, PutLine, PutPile) it enumerates every way of reaching a goal layout by moving at most two
objects once each and follows a cheapest one. Because that cost is an exact step count and every
action follows a cheapest plan, the cost drops by one each step, so replanning never oscillates.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from itertools import permutations, product
from typing import TYPE_CHECKING

from imaginebench.envs.babyai.layout import (
    DOOR_OPEN,
    DROP,
    MOVES,
    OBJECTS,
    PICKUP,
    ROOM_CELLS,
    TOGGLE,
    Pos,
    World,
)
from imaginebench.envs.babyai.tasks import CENTER, CORNERS, Goal, goto_cell

if TYPE_CHECKING:
    from imaginebench.envs.babyai.env import BabyAIEnv

INF = float("inf")
Placement = tuple[str, Pos]
"""(object, cell to drop it on)."""


def _bfs(source: Pos) -> dict[Pos, int]:
    """Steps from ``source`` to every room cell; objects are walkable, walls and the door are not."""
    walkable = set(ROOM_CELLS)
    dist, queue = {source: 0}, deque([source])
    while queue:
        x, y = queue.popleft()
        for dx, dy in MOVES.values():
            nxt = (x + dx, y + dy)
            if nxt in walkable and nxt not in dist:
                dist[nxt] = dist[(x, y)] + 1
                queue.append(nxt)
    return dist


DIST: dict[Pos, dict[Pos, int]] = {cell: _bfs(cell) for cell in ROOM_CELLS}
"""All-pairs path lengths in the room (its walls never change, so computed once)."""


def _go(agent: Pos, targets: Iterable[Pos], then: int) -> int:
    """A move along a shortest path to the nearest target; ``then`` once the agent is on one."""
    target = min(targets, key=lambda cell: DIST[agent][cell])
    if agent == target:
        return then
    for action, (dx, dy) in MOVES.items():
        nxt = (agent[0] + dx, agent[1] + dy)
        if nxt in DIST and DIST[nxt][target] == DIST[agent][target] - 1:
            return action
    raise AssertionError("unreachable: the room is connected")


def _noop(world: World) -> int:
    """An action that changes nothing (used only once the goal already holds)."""
    return PICKUP if world.carrying is not None else DROP


def _free_hands(world: World) -> int:
    """Put down what the agent carries, on the nearest cell without an object."""
    free = [cell for cell in ROOM_CELLS if world.object_at(cell) is None]
    return _go(world.agent, free, DROP)


def _tour_cost(world: World, plan: Sequence[Placement]) -> float:
    """Exact steps to carry out ``plan`` (pick up, carry, drop each object in turn), inf if impossible."""
    agent, carrying = world.agent, world.carrying
    positions = dict(world.positions)
    cost = 0
    for obj, cell in plan:
        if carrying is not None and carrying != obj:
            return INF
        if carrying is None:
            source = positions[obj]
            if source is None:
                return INF
            cost += DIST[agent][source] + 1
            agent = source
        if any(pos == cell for other, pos in positions.items() if other != obj):
            return INF  # a drop needs an empty cell
        cost += DIST[agent][cell] + 1
        positions[obj], agent, carrying = cell, cell, None
    return INF if carrying is not None else cost


def _follow(world: World, plan: Sequence[Placement]) -> int:
    obj, cell = plan[0]
    if world.carrying == obj:
        return _go(world.agent, [cell], DROP)
    source = world.positions[obj]
    assert source is not None
    return _go(world.agent, [source], PICKUP)


def _best_placement(world: World, plans: Iterable[Sequence[Placement]]) -> int:
    best, best_cost = None, INF
    for plan in plans:
        cost = _tour_cost(world, plan)
        if cost < best_cost:
            best, best_cost = plan, cost
    return _noop(world) if not best else _follow(world, best)


def _plans_moving(world: World, layout: dict[str, Pos], max_moves: int = 2) -> Iterable[Sequence[Placement]]:
    """Every order of moving the objects that are not yet where ``layout`` wants them."""
    to_move = [obj for obj, cell in layout.items() if world.positions[obj] != cell]
    if len(to_move) <= max_moves:
        for order in permutations(to_move):
            yield [(obj, layout[obj]) for obj in order]


_LINES: list[list[Pos]] = [
    [cell for cell in ROOM_CELLS if cell[axis] == k] for axis in (0, 1) for k in sorted({c[axis] for c in ROOM_CELLS})
]
"""The room's columns and rows."""


def _line_plans(world: World) -> Iterable[Sequence[Placement]]:
    """PutLine: for each row and column, move the objects outside it onto free cells of it."""
    for line in _LINES:
        outside = [obj for obj in OBJECTS if world.positions[obj] not in line]
        if len(outside) > 2:
            continue
        fixed = {obj: world.positions[obj] for obj in OBJECTS if obj not in outside}
        free = [cell for cell in line if cell not in fixed.values()]
        for cells in permutations(free, len(outside)):
            yield from _plans_moving(world, {**fixed, **dict(zip(outside, cells))})  # type: ignore[arg-type]


def _pile_plans(world: World) -> Iterable[Sequence[Placement]]:
    """PutPile: every L of three cells (a corner and two perpendicular arms), every assignment."""
    room = set(ROOM_CELLS)
    for (x, y), dx, dy in product(ROOM_CELLS, (-1, 1), (-1, 1)):
        shape = [(x, y), (x + dx, y), (x, y + dy)]
        if all(cell in room for cell in shape):
            for cells in permutations(shape):
                yield from _plans_moving(world, dict(zip(OBJECTS, cells)))


def _next_to_plans(world: World, first: str, second: str) -> Iterable[Sequence[Placement]]:
    """PutNext moves the first named object next to the second, as the instruction says."""
    anchor = world.positions[second]
    assert anchor is not None
    for dx, dy in MOVES.values():
        cell = (anchor[0] + dx, anchor[1] + dy)
        if cell in DIST:
            yield [(first, cell)]


def _open_door(world: World) -> int:
    return _go(world.agent, [world.door_front], TOGGLE)


def _pick_up(world: World, obj: str) -> int:
    if world.carrying is not None:
        return _free_hands(world)
    cell = world.positions[obj]
    assert cell is not None
    return _go(world.agent, [cell], PICKUP)


def expert_action(world: World, goal: Goal) -> int:
    """The expert's action for ``goal`` in ``world``."""
    task = goal.task
    door_open = world.door_state == DOOR_OPEN
    if task == "GoTo":
        cell = goto_cell(world, goal.objects[0])
        if cell is None:  # carrying the target: put it down and stand on it
            return _free_hands(world)
        return _go(world.agent, [cell], _noop(world))
    if task == "Open":
        return _noop(world) if door_open else _open_door(world)
    if task == "PickUp":
        return _noop(world) if world.carrying == goal.objects[0] else _pick_up(world, goal.objects[0])
    if task == "PutNext":
        first, second = goal.objects
        if world.carrying not in (None, first):
            return _free_hands(world)
        return _best_placement(world, _next_to_plans(world, first, second))
    if task == "OpenGo":
        if not door_open:
            return _open_door(world)
        return _go(world.agent, world.floor_cells().values(), _noop(world))
    if task == "OpenPick":  # door first, as the instruction says
        if not door_open:
            return _open_door(world)
        if world.carrying is not None:
            return _noop(world)
        return _go(world.agent, world.floor_cells().values(), PICKUP)
    if task == "GoWall":
        return _go(world.agent, [CORNERS[goal.corner]], _noop(world))
    if task == "GoCenter":
        obj = goal.objects[0]
        if world.carrying == obj:
            return _go(world.agent, CENTER, _noop(world))
        return _pick_up(world, obj)
    if task == "OpenLock":
        if door_open:
            return _noop(world)
        return _open_door(world) if world.carrying == "key" else _pick_up(world, "key")
    if task == "PutLine":
        return _best_placement(world, _line_plans(world))
    if task == "PutPile":
        return _best_placement(world, _pile_plans(world))
    raise ValueError(f"BabyAI expert: unknown task {task!r}")


class BabyAIExpert:
    """``expert(env) -> action`` for any BabyAI task; reads the env's world and goal."""

    def __call__(self, env: BabyAIEnv) -> int:
        return expert_action(env.world(), env.goal)
