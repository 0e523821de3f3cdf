"""CLEVR-Robot tasks per level: the goals each draws, start layouts, success checks.

Success checks are pure functions of ball positions ``(5, 2)`` (and, for the one-step tasks,
the episode's start positions), so tests and code judging imagined states need no simulator.

Changes from the original (docs/original-benchmark.md#clevr-robot, quirks 2-4): a one-step task is judged on where the
ball ended up, not on the action, and its episode runs until the step is done (or the
horizon); it also requires the other balls to stay put (a step of one ball is asked for, and
without that condition 50 random pushes almost always include the right one by chance).
A push-{side} episode gets :data:`RELATION_HORIZON` pushes instead of the original's 50 (random
pushes met a side relation within 50 in 30-33 % of episodes). Hard goals are a fixed catalogue
(:data:`HARD_GOALS`) of consistent relation combinations.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import permutations

import numpy as np

from imaginebench.envs.clevr.layout import BALL_RADIUS, CENTER_HIGH, CENTER_LOW, COLORS, NUM_BALLS, SIDES

NEAR = 3.5 * BALL_RADIUS
"""A ball is "to a side of" another when their centres are closer than this (touching is
2 radii, so the goal region is a 90° sector of a ring 1.5 radii wide; the original used 3 radii
of its larger balls) ..."""
SECTOR_HALF_ANGLE = np.pi / 4
"""... and the direction between them lies within 45° of the side (the original's sectors)."""
STEP_MIN = 0.8 * BALL_RADIUS
"""A one-step task needs the ball moved at least this far (a free push moves it 1.5 radii) ..."""
STILL_MAX = 0.5 * BALL_RADIUS
"""... and every other ball left within this distance of where it started."""
LINE_HALF_ANGLE = np.pi / 6
"""Line-up: each next ball in colour order lies within 30° of +x from the previous (the original's rule)."""
GATHER_RADIUS = 3 * BALL_RADIUS
"""Gather: every other ball's centre within this distance of the green ball's."""
RELATION_SPOT = 2.7 * BALL_RADIUS
"""Where a relation's moving ball is aimed: this far from the reference ball, on the asked side."""
STEP_SPOT = 1.5 * BALL_RADIUS
"""Where a one-step task's ball is aimed: one free push (0.15) from its start."""
GREEN = COLORS.index("green")
HORIZON = 50
"""Pushes per episode (the original's, for every level; its easy episodes always ended after one)."""
RELATION_HORIZON = 15
"""Pushes per push-{side} episode: the expert needs at most 7 (mean 2.9, 800 episodes); uniformly random
pushes meet the relation within 15 in 13-15 % of episodes, within 50 in 30-33 % (1,000 per task).
Tightening the relation instead barely helps: 2.7 radii and 30° still leave 17-20 % within 50."""
START_GAP = BALL_RADIUS
"""Start layouts leave at least this much free space between ball surfaces (as the original's 0.1)."""


@dataclass(frozen=True)
class Relation:
    """``src`` ball to the ``side`` of ``dst`` ball (indices into :data:`COLORS`)."""

    src: int
    dst: int
    side: str


@dataclass(frozen=True)
class Goal:
    """What one episode asks for: relations that must hold together, or one ball to step to a side."""

    task: str
    relations: tuple[Relation, ...] = ()
    ball: int = -1
    side: str = ""

    def to_json(self) -> dict:
        return {
            "task": self.task,
            "relations": [[r.src, r.dst, r.side] for r in self.relations],
            "ball": self.ball,
            "side": self.side,
        }

    @staticmethod
    def from_json(data: dict) -> Goal:
        relations = tuple(Relation(int(s), int(d), str(side)) for s, d, side in data.get("relations", ()))
        return Goal(str(data["task"]), relations, int(data.get("ball", -1)), str(data.get("side", "")))


# ----------------------------------------------------------------------------- success checks


def _within(vector: np.ndarray, axis: np.ndarray, half_angle: float) -> bool:
    norm = float(np.linalg.norm(vector))
    return norm > 0 and float(vector @ axis) / norm >= np.cos(half_angle) - 1e-9


def relation_holds(positions: np.ndarray, relation: Relation) -> bool:
    offset = positions[relation.src] - positions[relation.dst]
    return float(np.linalg.norm(offset)) < NEAR and _within(offset, SIDES[relation.side], SECTOR_HALF_ANGLE)


def relations_hold(positions: np.ndarray, start: np.ndarray, goal: Goal) -> bool:
    return all(relation_holds(positions, relation) for relation in goal.relations)


def stepped(positions: np.ndarray, start: np.ndarray, goal: Goal) -> bool:
    moves = positions - start
    others_still = all(np.linalg.norm(moves[i]) <= STILL_MAX for i in range(NUM_BALLS) if i != goal.ball)
    move = moves[goal.ball]
    return (
        others_still and float(np.linalg.norm(move)) >= STEP_MIN and _within(move, SIDES[goal.side], SECTOR_HALF_ANGLE)
    )


def lined_up(positions: np.ndarray, start: np.ndarray, goal: Goal) -> bool:
    return all(_within(positions[i + 1] - positions[i], SIDES["right"], LINE_HALF_ANGLE) for i in range(NUM_BALLS - 1))


def gathered(positions: np.ndarray, start: np.ndarray, goal: Goal) -> bool:
    return all(np.linalg.norm(positions[i] - positions[GREEN]) < GATHER_RADIUS for i in range(NUM_BALLS) if i != GREEN)


# ----------------------------------------------------------------------------- goals per task


def _relation_goals(task: str, side: str) -> tuple[Goal, ...]:
    return tuple(Goal(task, (Relation(src, dst, side),)) for src, dst in permutations(range(NUM_BALLS), 2))


def _combined_relations(count: int, number: int, seed: int) -> tuple[Goal, ...]:
    """A fixed catalogue of ``number`` goals with ``count`` relations each that can hold together:
    distinct moving balls, reference balls that do not move, no two balls sent to the same spot."""
    rng = np.random.default_rng(seed)
    task = {2: "two-relations", 3: "three-relations"}[count]
    goals: dict[tuple, Goal] = {}
    while len(goals) < number:
        order = rng.permutation(NUM_BALLS)
        sources, references = sorted(order[:count].tolist()), order[count:].tolist()
        relations = tuple(
            Relation(src, int(rng.choice(references)), list(SIDES)[int(rng.integers(len(SIDES)))]) for src in sources
        )
        if len({(r.dst, r.side) for r in relations}) == count:
            goals.setdefault(tuple(relations), Goal(task, relations))
    return tuple(goals.values())


@dataclass(frozen=True)
class Task:
    name: str
    success: Callable[[np.ndarray, np.ndarray, Goal], bool]
    """``(positions, start positions, goal) → bool``."""
    goals: tuple[Goal, ...]
    """Drawn uniformly at reset."""
    horizon: int = HORIZON


HARD_GOALS_PER_TASK = 40
TASKS: dict[str, Task] = {
    task.name: task
    for task in (
        *(
            Task(f"push-{side}", relations_hold, _relation_goals(f"push-{side}", side), RELATION_HORIZON)
            for side in SIDES
        ),
        *(
            Task(f"step-{side}", stepped, tuple(Goal(f"step-{side}", ball=b, side=side) for b in range(NUM_BALLS)))
            for side in SIDES
        ),
        Task("two-relations", relations_hold, _combined_relations(2, HARD_GOALS_PER_TASK, seed=2)),
        Task("three-relations", relations_hold, _combined_relations(3, HARD_GOALS_PER_TASK, seed=3)),
        Task("line-up", lined_up, (Goal("line-up"),)),
        Task("gather", gathered, (Goal("gather"),)),
    )
}
LEVEL_TASKS: dict[str, tuple[str, ...]] = {
    "train": tuple(f"push-{side}" for side in SIDES),
    "rephrase": tuple(f"push-{side}" for side in SIDES),
    "easy": tuple(f"step-{side}" for side in SIDES),
    "hard": ("two-relations", "three-relations", "line-up", "gather"),
}


def is_success(positions: np.ndarray, start: np.ndarray, goal: Goal) -> bool:
    return TASKS[goal.task].success(np.asarray(positions, dtype=np.float64), np.asarray(start, dtype=np.float64), goal)


# ----------------------------------------------------------------------------- start sampling


def _room_for_goal(positions: np.ndarray, goal: Goal) -> bool:
    """The goal can be reached without first moving a reference ball off a wall: each relation's
    target spot, and a one-step task's next spot, lies inside the walls."""
    targets = [positions[r.dst] + RELATION_SPOT * SIDES[r.side] for r in goal.relations]
    if goal.ball >= 0:
        targets.append(positions[goal.ball] + STEP_SPOT * SIDES[goal.side])
    return all(np.all(t >= CENTER_LOW) and np.all(t <= CENTER_HIGH) for t in targets)


def sample_layout(rng: np.random.Generator) -> np.ndarray:
    """Five ball centres inside the walls with :data:`START_GAP` between surfaces (rejection sampling)."""
    low, high = CENTER_LOW + 0.05, CENTER_HIGH - 0.05
    for _ in range(10_000):
        positions = rng.uniform(low, high, size=(NUM_BALLS, 2))
        gaps = np.linalg.norm(positions[:, None] - positions[None], axis=-1) + np.eye(NUM_BALLS) * 9
        if gaps.min() >= 2 * BALL_RADIUS + START_GAP:
            return positions
    raise RuntimeError("Ball-v0: could not sample a layout")


def sample_start(task: str, rng: np.random.Generator) -> tuple[np.ndarray, Goal]:
    """Draw a goal of ``task`` and a start layout where it does not hold yet but has room to."""
    spec = TASKS[task]
    goal = spec.goals[int(rng.integers(len(spec.goals)))]
    for _ in range(10_000):
        positions = sample_layout(rng)
        if _room_for_goal(positions, goal) and not spec.success(positions, positions, goal):
            return positions, goal
    raise RuntimeError(f"Ball-v0: could not sample a start for task {task!r}")
