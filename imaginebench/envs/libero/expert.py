"""Scripted expert: a state machine of end-effector waypoints per task stage (move above, descend,
grasp, lift, move over the target, release), driving the OSC_POSE controller with position deltas.

It reads only the 44-number state and the task's current stage, so the stages of composite
(novel) tasks are solved by sequencing the same few skills.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

import numpy as np

from imaginebench.envs.libero.layout import EEF, FINGERS, OBJECTS, position
from imaginebench.envs.libero.tasks import Stage

if TYPE_CHECKING:
    from imaginebench.envs.libero.env import LiberoEnv

GRASP_HEIGHT = {"alphabet_soup": 0.02, "cream_cheese": 0.0, "salad_dressing": 0.03}
"""End-effector height above an object's body origin at which its fingers close on it."""
REST_HEIGHT = {"alphabet_soup": 0.038, "cream_cheese": 0.009, "salad_dressing": 0.073}
"""Height of an object's body origin above what it stands on (measured on the settled scene)."""
BASKET_FLOOR = 0.022
"""Height of the basket's inner floor above its body origin."""
HOVER = 0.12
"""Height of the approach point above the grasp point."""
CARRY_Z = 0.30
"""End-effector height for carrying (clears the basket's 0.14 rim with the 0.15 long dressing held)."""
DROP_GAP = 0.025
"""Height above the basket floor at which an object is released (low, so that it lands upright)."""
RELEASE_ON = 0.14
"""End-effector height above the body of the object another is placed on, where it opens."""
ASIDE_SHIFT = 0.16
ASIDE_REACH_PENALTY = 0.2
"""Preference for put-down points near the middle of the floor area (within comfortable reach)."""
OUT_SHIFT = 0.45
GAIN = 10.0
"""Action per metre of position error (an action of 1 asks the controller for 5 cm)."""
OPEN, CLOSE = -1.0, 1.0
GRIP_STEPS = 12
TOLERANCE = 0.012
STALL_STEPS, STALL_PROGRESS = 10, 0.002
"""A waypoint counts as reached when the hand came no closer than this in that many steps (contacts
can hold it a centimetre short, where a proportional command is too weak to push on)."""
HELD_GAP = (0.005, 0.075)
"""Finger gap (first minus second finger position) of fingers closed on an object: fully open is
0.078, closed on nothing ~0."""

Target = Callable[[np.ndarray], np.ndarray]


@dataclass
class Waypoint:
    """Go to ``target(state)`` with the gripper at ``grip``; done when there (or after ``wait`` steps)."""

    target: Target
    grip: float
    wait: int = 0


def _above(obj: str, height: float) -> Target:
    return lambda s: position(s, obj) + np.array([0.0, 0.0, GRASP_HEIGHT[obj] + height])


def _grasp_waypoints(obj: str) -> list[Waypoint]:
    lift = lambda s: np.array([*s[EEF][:2], CARRY_Z])
    return [
        Waypoint(_above(obj, HOVER), OPEN),
        Waypoint(_above(obj, 0.0), OPEN),
        Waypoint(_above(obj, 0.0), CLOSE, wait=GRIP_STEPS),
        Waypoint(lift, CLOSE),
    ]


def _release_waypoints(obj: str, drop: Target) -> list[Waypoint]:
    """Carry the held object over ``drop`` (an end-effector point), lower, open, rise."""
    over = lambda s: np.array([*drop(s)[:2], CARRY_Z])
    return [
        Waypoint(over, CLOSE),
        Waypoint(drop, CLOSE),
        Waypoint(drop, OPEN, wait=GRIP_STEPS),
        Waypoint(over, OPEN),
    ]


def _centred(state: np.ndarray, obj: str, point: np.ndarray) -> np.ndarray:
    """The end-effector point that puts the held object's centre (not the hand) over ``point``:
    an object released off-centre in the basket lies too close to a wall for the fingers to reach
    it again (pick-out-of tasks start from such states)."""
    offset = position(state, obj)[:2] - state[EEF][:2]
    return point - np.array([*offset, 0.0])


def _aside_point(obj: str, start: np.ndarray) -> Target:
    """Put the object down ``ASIDE_SHIFT`` from its start, in the direction (of eight) that leaves it
    farthest from the other objects and the basket, just above its resting height."""
    here = position(start, obj)[:2]
    others = [position(start, name)[:2] for name in (*OBJECTS, "basket") if name != obj]
    angles = np.linspace(0.0, 2 * np.pi, 8, endpoint=False)
    candidates = here + ASIDE_SHIFT * np.stack([np.cos(angles), np.sin(angles)], axis=1)
    clearance = [min(np.linalg.norm(c - o) for o in others) - ASIDE_REACH_PENALTY * np.linalg.norm(c) for c in candidates]
    point = np.array([*candidates[int(np.argmax(clearance))], position(start, obj)[2] + GRASP_HEIGHT[obj] + 0.01])
    return lambda _s: point


def _out_point() -> Target:
    """Hold the object high, on the robot's side of the basket, far enough from it."""
    return lambda s: np.array([*(position(s, "basket")[:2] + np.array([0.0, -OUT_SHIFT])), CARRY_Z])


def stage_plan(stage: Stage, state: np.ndarray, start: np.ndarray) -> list[Waypoint]:
    """Waypoints that solve ``stage`` from ``state`` (the object is re-grasped unless already held)."""
    obj = stage.obj
    gap = state[FINGERS][0] - state[FINGERS][1]
    held = HELD_GAP[0] < gap < HELD_GAP[1] and np.linalg.norm(state[EEF] - _above(obj, 0.0)(state)) < 0.03
    grasp = [] if held else _grasp_waypoints(obj)
    if stage.action == "reach":
        return [Waypoint(_above(obj, HOVER), OPEN), Waypoint(_above(obj, 0.0), OPEN)]
    if stage.action == "grasp":
        return grasp or _grasp_waypoints(obj)[-1:]
    if stage.action == "basket":
        drop = lambda s: _centred(s, obj, position(s, "basket") + np.array([0.0, 0.0, BASKET_FLOOR + REST_HEIGHT[obj] + GRASP_HEIGHT[obj] + DROP_GAP]))
        return grasp + _release_waypoints(obj, drop)
    if stage.action.startswith("on:"):
        other = stage.action[3:]
        drop = lambda s: position(s, other) + np.array([0.0, 0.0, RELEASE_ON])
        return grasp + _release_waypoints(obj, drop)
    if stage.action == "aside":
        return grasp + _release_waypoints(obj, _aside_point(obj, start))
    if stage.action == "out":
        return grasp + [Waypoint(_out_point(), CLOSE)]
    raise ValueError(f"Libero-v0 expert: unknown stage action {stage.action!r}")


class LiberoExpert:
    """``expert(env) -> action`` (float32 (7,) in [-1, 1]); replans when the task's stage changes."""

    def __init__(self) -> None:
        self._stage: int | None = None
        self._plan: list[Waypoint] = []
        self._waited = 0
        self._distances: list[float] = []
        self._arrived = False

    def __call__(self, env: "LiberoEnv") -> np.ndarray:
        task = env.spec_task
        assert task is not None, "Libero-v0: call reset() before asking the expert"
        state, stage = env.state(), min(env.stage, len(task.stages) - 1)
        if stage != self._stage:
            self._stage, self._waited, self._distances = stage, 0, []
            self._plan = stage_plan(task.stages[stage], state, env.start_state)
        return self.act(state)

    def act(self, state: np.ndarray) -> np.ndarray:
        while self._plan:
            waypoint = self._plan[0]
            distance = float(np.linalg.norm(waypoint.target(state) - state[EEF]))
            self._distances.append(distance)
            stalled = len(self._distances) > STALL_STEPS and self._distances[-STALL_STEPS - 1] - distance < STALL_PROGRESS
            arrived = distance < TOLERANCE or stalled
            if waypoint.wait:
                self._waited += 1
                arrived = self._waited > waypoint.wait
            self._arrived = bool(arrived)
            if not arrived or len(self._plan) == 1:
                break
            self._plan.pop(0)
            self._waited, self._distances = 0, []
        waypoint = self._plan[0] if self._plan else Waypoint(lambda s: s[EEF], OPEN)
        move = np.clip(GAIN * (waypoint.target(state) - state[EEF]), -1.0, 1.0)
        return np.concatenate([move, np.zeros(3), [waypoint.grip]]).astype(np.float32)

    @property
    def waypoints_left(self) -> int:
        """Waypoints of the current stage's plan not yet reached (the initial-state banks stop on it)."""
        return len(self._plan)

    @property
    def arrived(self) -> bool:
        """Whether the last action was issued at the final waypoint, already reached."""
        return self._arrived
