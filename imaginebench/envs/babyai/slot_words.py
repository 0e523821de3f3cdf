"""BabyAI's state values and actions in words, for a grounding model's slots (``imaginebench/envs/slot_words.py``).

Each phrase says what the number means where the state vector puts it: ``ball_color`` 4 is "yellow ball",
``door_state`` 2 "locked door", ``carry_type`` 5 "carrying key", ``key_row`` 0 "key carried" (a carried object
sits at (0, 0)). Coordinates are named by number: rows and columns have no names in the instructions.
"""

from __future__ import annotations

from minigrid.core.constants import IDX_TO_COLOR, IDX_TO_OBJECT

from imaginebench.envs.babyai.layout import DOOR_CLOSED, DOOR_LOCKED, DOOR_OPEN, GRID_WIDTH, STATE_FIELDS

ACTION_WORDS: tuple[str, ...] = ("move west", "move east", "move north", "pick up", "drop", "open", "move south")
"""Indexed as ``layout.WEST, EAST, NORTH, PICKUP, DROP, TOGGLE, SOUTH``."""

KIND_FIELDS: tuple[str, ...] = tuple(f for f in STATE_FIELDS if f.endswith(("_color", "_state", "_type")))
"""The dimensions whose values are kinds the instructions name (colours, the door's state, what is carried)."""

DOOR_STATE_WORDS = {DOOR_OPEN: "open door", DOOR_CLOSED: "closed door", DOOR_LOCKED: "locked door"}


def state_value_words(fields: tuple[str, ...] = STATE_FIELDS) -> tuple[tuple[str, ...], ...]:
    """Per dimension of :data:`~imaginebench.envs.babyai.layout.STATE_FIELDS`, the words for each value it takes
    (none for a dimension not in ``fields``)."""
    return tuple(_field_words(field) if field in fields else () for field in STATE_FIELDS)


def _field_words(field: str) -> tuple[str, ...]:
    thing, kind = field.rsplit("_", 1)
    if field == "door_state":
        return tuple(DOOR_STATE_WORDS[v] for v in sorted(DOOR_STATE_WORDS))
    if field == "carry_type":
        return ("carrying nothing", *(f"carrying {IDX_TO_OBJECT[v]}" for v in range(1, len(IDX_TO_OBJECT))))
    if field == "carry_color":
        return tuple(f"carrying {IDX_TO_COLOR[v]}" for v in range(len(IDX_TO_COLOR)))
    if kind == "color":
        return tuple(f"{IDX_TO_COLOR[v]} {thing}" for v in range(len(IDX_TO_COLOR)))
    axis = "row" if kind == "row" else "column"
    carried = (f"{thing} carried",) if thing in ("ball", "box", "key") else (f"{thing} {axis} 0",)
    return (*carried, *(f"{thing} {axis} {v}" for v in range(1, GRID_WIDTH)))
