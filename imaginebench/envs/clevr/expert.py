"""Scripted CLEVR-Robot expert: try pushes in a private copy of the table, keep the best one.

Each step the expert simulates every push of the balls the goal involves from the current
layout and takes the one that leaves the lowest *distance to go* for the task: for a relation,
the path length from the moving ball to a spot on the asked side of the reference ball, going
around the reference ball rather than through it; for a one-step task, the distance to one
push beyond the start plus any movement of the other balls; for line-up and gather, the summed
distances of the balls to their spots in a best-fitting target arrangement. Because the
lookahead uses the same physics as the env, collisions and walls are accounted for exactly.
"""

from __future__ import annotations

from functools import cache
from itertools import permutations
from typing import TYPE_CHECKING

import numpy as np

from imaginebench.envs.clevr.layout import BALL_RADIUS, CENTER_HIGH, CENTER_LOW, DIRECTIONS, NUM_BALLS, SIDES, action_of
from imaginebench.envs.clevr.physics import Table
from imaginebench.envs.clevr.tasks import GATHER_RADIUS, GREEN, RELATION_SPOT, STEP_SPOT, Goal, Relation, is_success

if TYPE_CHECKING:
    from imaginebench.envs.clevr.env import ClevrEnv

GATHER_SPOT = 0.75 * GATHER_RADIUS
LINE_SPACING = 2.2 * BALL_RADIUS
_ROTATIONS = np.linspace(0, np.pi / 2, 7, endpoint=False)
"""Candidate orientations of the square of spots around the green ball (it repeats every 90°)."""


@cache
def _lookahead_table() -> Table:
    return Table()


def _outside(point: np.ndarray) -> float:
    """How far a point lies outside the area ball centres can reach."""
    return float(np.linalg.norm(np.maximum(CENTER_LOW - point, 0) + np.maximum(point - CENTER_HIGH, 0)))


def _around_disc(start: np.ndarray, end: np.ndarray, centre: np.ndarray, radius: float) -> float:
    """Shortest path length from ``start`` to ``end`` that does not enter the disc (tangents + arc)."""
    a, b = start - centre, end - centre
    da, db = max(float(np.linalg.norm(a)), radius), max(float(np.linalg.norm(b)), radius)
    segment = end - start
    t = np.clip(-(a @ segment) / max(float(segment @ segment), 1e-12), 0.0, 1.0)
    if np.linalg.norm(a + t * segment) >= radius:
        return float(np.linalg.norm(segment))
    angle = float(np.arccos(np.clip(a @ b / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-12), -1, 1)))
    arc = max(angle - np.arccos(radius / da) - np.arccos(radius / db), 0.0)
    return float(np.sqrt(da**2 - radius**2) + np.sqrt(db**2 - radius**2) + radius * arc)


def _relation_cost(positions: np.ndarray, relation: Relation) -> float:
    spot = positions[relation.dst] + RELATION_SPOT * SIDES[relation.side]
    path = _around_disc(positions[relation.src], spot, positions[relation.dst], 2 * BALL_RADIUS)
    return path + 2 * _outside(spot)


def _line_cost(positions: np.ndarray) -> float:
    y = float(np.clip(np.median(positions[:, 1]), CENTER_LOW[1], CENTER_HIGH[1]))
    xs = (np.arange(NUM_BALLS) - (NUM_BALLS - 1) / 2) * LINE_SPACING
    return float(np.linalg.norm(positions - np.stack([xs, np.full(NUM_BALLS, y)], axis=1), axis=1).sum())


_ORDERS = np.array(list(permutations(range(NUM_BALLS - 1))))
"""Every assignment of the four other balls to the four spots around the green ball."""


def _gather_cost(positions: np.ndarray) -> float:
    others = positions[[i for i in range(NUM_BALLS) if i != GREEN]]
    angles = _ROTATIONS[:, None] + np.arange(NUM_BALLS - 1) * 2 * np.pi / (NUM_BALLS - 1)
    spots = positions[GREEN] + GATHER_SPOT * np.stack([np.cos(angles), np.sin(angles)], axis=-1)  # (rotation, spot, 2)
    outside = np.linalg.norm(np.maximum(CENTER_LOW - spots, 0) + np.maximum(spots - CENTER_HIGH, 0), axis=-1).sum(
        axis=1
    )
    distances = np.linalg.norm(others[None, :, None] - spots[:, None], axis=-1)  # (rotation, ball, spot)
    assigned = distances[:, np.arange(NUM_BALLS - 1), _ORDERS].sum(axis=-1)  # (rotation, order)
    return float((assigned.min(axis=1) + 2 * outside).min())


def distance_to_go(positions: np.ndarray, start: np.ndarray, goal: Goal) -> float:
    """0 when the goal holds, otherwise a path-length estimate of the pushing left to do."""
    if is_success(positions, start, goal):
        return 0.0
    if goal.relations:
        return sum(_relation_cost(positions, r) for r in goal.relations)
    if goal.ball >= 0:
        moved = np.linalg.norm(positions - start, axis=1)
        spot = start[goal.ball] + STEP_SPOT * SIDES[goal.side]
        return float(np.linalg.norm(positions[goal.ball] - spot)) + 2 * float(moved.sum() - moved[goal.ball])
    return _line_cost(positions) if goal.task == "line-up" else _gather_cost(positions)


def involved_balls(goal: Goal) -> list[int]:
    if goal.relations:
        return sorted({b for r in goal.relations for b in (r.src, r.dst)})
    return [goal.ball] if goal.ball >= 0 else list(range(NUM_BALLS))


class ClevrExpert:
    """Greedy one-push lookahead on a private table (the env is not touched)."""

    def __call__(self, env: ClevrEnv) -> int:
        assert env.goal is not None, "Ball-v0: reset the env before asking the expert"
        positions, start, goal = env.positions(), env.start_positions, env.goal
        table = _lookahead_table()
        best_action, best_cost = 0, np.inf
        for ball in involved_balls(goal):
            for direction in range(len(DIRECTIONS)):
                action = action_of(ball, direction)
                table.set_positions(positions)
                cost = distance_to_go(table.push(action), start, goal)
                if cost < best_cost - 1e-9:
                    best_action, best_cost = action, cost
        return best_action
