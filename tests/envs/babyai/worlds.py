"""Hand-made BabyAI worlds for tests."""

from imaginebench.envs.babyai.layout import DOOR_CLOSED, World

COLORS = {"ball": "red", "box": "green", "key": "blue", "door": "purple"}


def make_world(
    agent=(3, 3),
    ball=(1, 1),
    box=(1, 3),
    key=(1, 5),
    door_row=3,
    door_state=DOOR_CLOSED,
    carrying=None,
    colors=None,
) -> World:
    """Ball, box and key in the west column, door in row 3 (closed), agent in the middle."""
    positions = {"ball": ball, "box": box, "key": key}
    if carrying is not None:
        positions[carrying] = None
    return World({**COLORS, **(colors or {})}, positions, door_row, door_state, agent, carrying)
