"""The BabyAI world as plain data, and its 17-float state vector (one layout for all code).

The env simulates on minigrid objects; every check, the expert and the state vector work on
:class:`World`, so tests and other code can reason about states without a simulator.
Coordinates are minigrid's ``(x, y)`` = (column, row); the state vector lists row before column.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
from minigrid.core.constants import COLOR_NAMES, COLOR_TO_IDX, IDX_TO_COLOR, IDX_TO_OBJECT, OBJECT_TO_IDX

from imaginebench.envs.base import malformed

Pos = tuple[int, int]

OBJECTS: tuple[str, ...] = ("ball", "box", "key")
"""The three movable objects; there is exactly one of each."""
COLORS: tuple[str, ...] = tuple(COLOR_NAMES)
DOOR_OPEN, DOOR_CLOSED, DOOR_LOCKED = 0, 1, 2
"""Door states, as minigrid encodes them."""

ROOM_SIZE = 8
"""minigrid ``RoomGrid(room_size=8, num_rows=1, num_cols=2)``: a 15 × 8 grid, two 6 × 6 rooms."""
GRID_WIDTH, GRID_HEIGHT = 2 * (ROOM_SIZE - 1) + 1, ROOM_SIZE
DOOR_COL = ROOM_SIZE - 1
"""The door sits in the wall shared by both rooms; everything happens in the left room."""
ROOM_CELLS: tuple[Pos, ...] = tuple((x, y) for y in range(1, ROOM_SIZE - 1) for x in range(1, ROOM_SIZE - 1))
"""The left room's interior, the only cells the agent and the objects can occupy."""

WEST, EAST, NORTH, PICKUP, DROP, TOGGLE, SOUTH = range(7)
"""Actions (Discrete 7), as in the original benchmark: absolute moves, with ``6`` (minigrid's "done") = south."""
MOVES: dict[int, Pos] = {WEST: (-1, 0), EAST: (1, 0), NORTH: (0, -1), SOUTH: (0, 1)}
NUM_ACTIONS = 7

STATE_FIELDS: tuple[str, ...] = (
    "ball_color",
    "ball_row",
    "ball_col",
    "box_color",
    "box_row",
    "box_col",
    "key_color",
    "key_row",
    "key_col",
    "door_color",
    "door_row",
    "door_col",
    "door_state",
    "agent_row",
    "agent_col",
    "carry_type",
    "carry_color",
)
"""Names of the state vector's dimensions, in order (the original benchmark's ``my_obs`` layout)."""
STATE_INDEX: dict[str, int] = {name: i for i, name in enumerate(STATE_FIELDS)}
STATE_DIM = len(STATE_FIELDS)
_HIGH_BY_KIND = {
    "color": max(COLOR_TO_IDX.values()),
    "row": GRID_HEIGHT - 1,
    "col": GRID_WIDTH - 1,
    "state": DOOR_LOCKED,
    "type": max(OBJECT_TO_IDX[obj] for obj in OBJECTS),
}
STATE_HIGH = np.array([_HIGH_BY_KIND[name.rsplit("_", 1)[1]] for name in STATE_FIELDS], dtype=np.float32)
"""Upper bound of each state dimension (the lower bound is 0)."""


@dataclass(frozen=True)
class World:
    """Everything that changes between or within episodes.

    ``positions[obj]`` is ``None`` while the agent carries ``obj``; ``colors`` also names the door's colour.
    """

    colors: Mapping[str, str]
    positions: Mapping[str, Pos | None]
    door_row: int
    door_state: int
    agent: Pos
    carrying: str | None = None
    _occupied: dict[Pos, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        occupied = {pos: obj for obj, pos in self.positions.items() if pos is not None}
        object.__setattr__(self, "_occupied", occupied)

    @property
    def door(self) -> Pos:
        return (DOOR_COL, self.door_row)

    @property
    def door_front(self) -> Pos:
        """The only room cell 4-adjacent to the door: where the agent stands to toggle it."""
        return (DOOR_COL - 1, self.door_row)

    def object_at(self, cell: Pos) -> str | None:
        return self._occupied.get(cell)

    def floor_cells(self) -> dict[str, Pos]:
        """Object → cell for every object lying on the floor."""
        return {obj: pos for obj, pos in self.positions.items() if pos is not None}


def manhattan(a: Pos, b: Pos) -> int:
    return abs(a[0] - b[0]) + abs(a[1] - b[1])


def adjacent(a: Pos | None, b: Pos | None) -> bool:
    """4-adjacency, as minigrid's ``pos_next_to``; an object being carried is next to nothing."""
    return a is not None and b is not None and manhattan(a, b) == 1


def encode_state(world: World) -> np.ndarray:
    """The 17-float state vector (see :data:`STATE_FIELDS`); a carried object sits at (0, 0)."""
    values: list[int] = []
    for obj in OBJECTS:
        x, y = world.positions[obj] or (0, 0)
        values += [COLOR_TO_IDX[world.colors[obj]], y, x]
    values += [COLOR_TO_IDX[world.colors["door"]], world.door_row, DOOR_COL, world.door_state]
    values += [world.agent[1], world.agent[0]]
    if world.carrying is None:
        values += [0, 0]
    else:
        values += [OBJECT_TO_IDX[world.carrying], COLOR_TO_IDX[world.colors[world.carrying]]]
    return np.asarray(values, dtype=np.float32)


def decode_state(state: np.ndarray) -> World:
    """Inverse of :func:`encode_state`, e.g. to judge success on states a model imagined."""
    s = {name: int(round(float(v))) for name, v in zip(STATE_FIELDS, np.asarray(state).reshape(-1))}
    carrying = IDX_TO_OBJECT[s["carry_type"]] if s["carry_type"] in (OBJECT_TO_IDX[o] for o in OBJECTS) else None
    colors = {obj: IDX_TO_COLOR[s[f"{obj}_color"]] for obj in (*OBJECTS, "door")}
    positions = {obj: None if obj == carrying else (s[f"{obj}_col"], s[f"{obj}_row"]) for obj in OBJECTS}
    return World(colors, positions, s["door_row"], s["door_state"], (s["agent_col"], s["agent_row"]), carrying)


def state_violations(state: np.ndarray) -> list[str]:
    """Why a (possibly imagined) state vector cannot occur in the BabyAI env; empty when legal.

    Checks what the simulator guarantees: whole numbers within bounds, valid colours and door
    state, the door in the shared wall, the agent and every floor object inside the left room,
    no two objects on one cell, and a carry slot that names exactly one object, with its colour,
    whose position is then (0, 0).
    """
    values = np.asarray(state, dtype=np.float64).reshape(-1)
    if reasons := malformed(values, STATE_DIM):
        return reasons
    reasons = [
        f"{name}={v:g} is not a whole number" for name, v in zip(STATE_FIELDS, values) if abs(v - round(v)) > 1e-3
    ]
    if reasons:
        return reasons
    s = {name: int(round(v)) for name, v in zip(STATE_FIELDS, values)}
    reasons += [
        f"{name}={s[name]} is out of bounds" for name, high in zip(STATE_FIELDS, STATE_HIGH) if not 0 <= s[name] <= high
    ]
    if reasons:
        return reasons
    if s["door_col"] != DOOR_COL or not 1 <= s["door_row"] <= ROOM_SIZE - 2:
        reasons.append(f"door at row {s['door_row']}, col {s['door_col']} is not in the shared wall")
    if (s["agent_col"], s["agent_row"]) not in ROOM_CELLS:
        reasons.append(f"agent at row {s['agent_row']}, col {s['agent_col']} is outside the room")
    carry_type_ids = {OBJECT_TO_IDX[obj]: obj for obj in OBJECTS}
    carried = carry_type_ids.get(s["carry_type"])
    if s["carry_type"] != 0 and carried is None:
        reasons.append(f"carry_type={s['carry_type']} is not a movable object")
    if carried is None and s["carry_color"] != 0:
        reasons.append("carry_color is set while nothing is carried")
    if carried is not None and s["carry_color"] != s[f"{carried}_color"]:
        reasons.append(
            f"the carried {carried} has colour {s['carry_color']}, the {carried} has {s[f'{carried}_color']}"
        )
    floor: dict[Pos, str] = {}
    for obj in OBJECTS:
        cell = (s[f"{obj}_col"], s[f"{obj}_row"])
        if obj == carried:
            if cell != (0, 0):
                reasons.append(f"the carried {obj} is also on the floor at row {cell[1]}, col {cell[0]}")
            continue
        if cell not in ROOM_CELLS:
            reasons.append(f"{obj} at row {cell[1]}, col {cell[0]} is outside the room")
        elif cell in floor:
            reasons.append(f"{obj} and {floor[cell]} overlap at row {cell[1]}, col {cell[0]}")
        floor[cell] = obj
    return reasons
