"""The CLEVR-Robot table as plain data: geometry, the 40 push actions, the 10-float state.

Everything here is a constant or a pure function of ball positions, so success checks, the
legality check and tests need no simulator. Axes follow the original (docs/original-benchmark.md#clevr-robot): +y is
"behind", -y "in front", -x "left", +x "right".

Geometry differs from the original on purpose: balls have radius 0.1 instead of 0.13. With
0.13 the five balls need 1.04 of width to stand in a straight left-to-right line but the walls
leave 0.94, so the hard "line up" task could only be met as a zigzag; with 0.1 a straight
line needs 0.8 of the 1.0 available.
"""

from __future__ import annotations

import numpy as np

from imaginebench.envs.base import malformed

COLORS: tuple[str, ...] = ("red", "blue", "green", "purple", "cyan")
"""Ball colours by index, as in the original (0 red, 1 blue, 2 green, 3 purple, 4 cyan)."""
NUM_BALLS = len(COLORS)
BALL_RADIUS = 0.1
WALL_X = (-0.6, 0.6)
WALL_Y = (-0.3, 0.7)
"""Inner faces of the four walls around the table (the original's wall planes)."""
CENTER_LOW = np.array([WALL_X[0] + BALL_RADIUS, WALL_Y[0] + BALL_RADIUS])
CENTER_HIGH = np.array([WALL_X[1] - BALL_RADIUS, WALL_Y[1] - BALL_RADIUS])
"""Where a ball's centre can be: inside the walls by one radius."""

SIDES: dict[str, np.ndarray] = {
    "behind": np.array([0.0, 1.0]),
    "left": np.array([-1.0, 0.0]),
    "front": np.array([0.0, -1.0]),
    "right": np.array([1.0, 0.0]),
}
"""The four sides a ball can be moved to, as unit vectors on the table."""

DIRECTIONS: tuple[tuple[float, float], ...] = (
    (1, 0),
    (0, 1),
    (-1, 0),
    (0, -1),
    (0.8, 0.8),
    (-0.8, 0.8),
    (0.8, -0.8),
    (-0.8, -0.8),
)
"""Push directions by index (the original's order and magnitudes; diagonals push a little harder)."""
NUM_ACTIONS = NUM_BALLS * len(DIRECTIONS)

STATE_FIELDS: tuple[str, ...] = tuple(f"{color}_{axis}" for color in COLORS for axis in "xy")
"""Names of the state vector's dimensions: the (x, y) of balls 0..4."""
STATE_DIM = len(STATE_FIELDS)
STATE_LOW = np.tile(CENTER_LOW, NUM_BALLS).astype(np.float32)
STATE_HIGH = np.tile(CENTER_HIGH, NUM_BALLS).astype(np.float32)

LEGALITY_SLACK = 0.01
"""How far (in table units) a ball may sink into a wall or another ball before a state counts as
illegal: the simulator's soft contacts let touching balls overlap by a few millimetres."""


def push_of(action: int) -> tuple[int, np.ndarray]:
    """Action ``ball * 8 + direction`` → (ball index, direction vector)."""
    if not 0 <= action < NUM_ACTIONS:
        raise ValueError(f"Ball-v0: action must be in 0..{NUM_ACTIONS - 1}, got {action}")
    ball, direction = divmod(int(action), len(DIRECTIONS))
    return ball, np.asarray(DIRECTIONS[direction], dtype=np.float64)


def action_of(ball: int, direction: int) -> int:
    return ball * len(DIRECTIONS) + direction


def positions_of(state: np.ndarray) -> np.ndarray:
    """The 10-float state → ball centres ``(5, 2)``."""
    return np.asarray(state, dtype=np.float64).reshape(NUM_BALLS, 2)


def state_of(positions: np.ndarray) -> np.ndarray:
    return np.asarray(positions, dtype=np.float32).reshape(STATE_DIM)


def state_violations(state: np.ndarray, tolerance: float = 0.0) -> list[str]:
    """Why a (possibly imagined) state cannot occur on the table; empty when legal.

    A legal state has every ball centre at least one radius inside the walls and every two
    centres at least two radii apart (balls never overlap), up to :data:`LEGALITY_SLACK`.
    ``tolerance`` > 0 asks instead whether some legal state lies within ``tolerance`` of ``state`` in
    every coordinate, as the transition checks compare states: each centre may then sit ``tolerance``
    further out, and two centres may be closer by as much as moving both by ``tolerance`` per
    coordinate along the line between them can part them (at most ``2 · tolerance · √2``), judged
    pair by pair.
    """
    values = np.asarray(state, dtype=np.float64).reshape(-1)
    if reasons := malformed(values, STATE_DIM):
        return reasons
    positions = positions_of(values)
    reasons = []
    reach = LEGALITY_SLACK + tolerance
    for color, (x, y) in zip(COLORS, positions):
        if not (
            CENTER_LOW[0] - reach <= x <= CENTER_HIGH[0] + reach
            and CENTER_LOW[1] - reach <= y <= CENTER_HIGH[1] + reach
        ):
            reasons.append(f"{color} ball at ({x:.3f}, {y:.3f}) is not inside the walls")
    for i in range(NUM_BALLS):
        for j in range(i + 1, NUM_BALLS):
            offset = positions[i] - positions[j]
            distance = float(np.linalg.norm(offset))
            parting = (
                2 * tolerance * float(np.abs(offset).sum()) / distance if distance > 0 else 2 * tolerance * np.sqrt(2)
            )
            if distance < 2 * BALL_RADIUS - LEGALITY_SLACK - parting:
                reasons.append(f"{COLORS[i]} and {COLORS[j]} balls overlap (centres {distance:.3f} apart)")
    return reasons
