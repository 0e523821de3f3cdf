"""Scripted expert whose action is a function of the 44-number state, the task's current stage and
the episode's first state only (no counters, no remembered waypoints), so behaviour cloning sees a
policy it can copy: a learner that only observes the state cannot imitate an expert phase that the
state does not show.

Each skill reads its phase off the state: the hand's offset from the object's grasp point, the
finger gap (open, closing, closed on the object, closed on nothing) and the hand's height. The hand
is always turned back to point straight down (the rotation part of the action), so a learner's
small rotation errors are corrected in the data instead of accumulating.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from scipy.spatial.transform import Rotation

from imaginebench.envs.libero.layout import EEF, EEF_QUAT, FINGERS, OBJECTS, position
from imaginebench.envs.libero.tasks import Stage

if TYPE_CHECKING:
    from imaginebench.envs.libero.env import LiberoEnv

GRASP_HEIGHT = {"alphabet_soup": 0.02, "cream_cheese": 0.0, "salad_dressing": 0.03}
"""End-effector height above an object's body origin at which its fingers close on it."""
REST_HEIGHT = {"alphabet_soup": 0.038, "cream_cheese": 0.009, "salad_dressing": 0.073}
"""Height of an object's body origin above what it stands on (measured on the settled scene)."""
CONTACT_GAP = {"alphabet_soup": 0.063, "cream_cheese": 0.042, "salad_dressing": 0.037}
"""Finger gap (first minus second finger position) of fingers closed on each object (measured:
the 10-90 % range over 240 expert grasps is within 0.002 of these); fully open is 0.078."""
GRIP_MARGIN = 0.004
"""A gap below contact + this margin means the fingers hold the object (the lift may begin)."""
EMPTY_GAP = 0.005
"""Below this the fingers closed on nothing."""
HELD_RADIUS = 0.03
"""Largest distance of the hand from an object's grasp point while it holds the object."""
BASKET_FLOOR = 0.022
"""Height of the basket's inner floor above its body origin."""
OVER_RIM = 0.115
"""Lowest end-effector height above the basket's origin the hand reaches: the hand (20 cm across the
fingers) rests on the 14 cm rim a few millimetres below (measured); objects are let go from there."""
HOVER = 0.12
"""Height of the approach point above the grasp point."""
CARRY_Z = 0.30
"""End-effector height for carrying (clears the basket's 0.14 rim with the 0.15 long dressing held)."""
LOW = 0.04
"""A held object is lifted straight up until the hand is within this of ``CARRY_Z``."""
DROP_GAP = 0.025
"""Height above the basket floor at which an object is released (low, so that it lands upright)."""
RELEASE_ON = 0.14
"""End-effector height above the body of the object another is placed on, where it opens."""
ASIDE_SHIFT = 0.16
ASIDE_REACH_PENALTY = 0.2
"""Preference for put-down points near the middle of the floor area (within comfortable reach)."""
OUT_SHIFT = 0.45
AT_XY, AT_Z = 0.015, 0.02
"""The hand is at a grasp or drop point within this horizontal distance and this height above it
(contacts hold the hand about a centimetre above a low grasp point)."""
DESCEND_XY = 0.01
"""Horizontal error up to which the hand descends from the hover point; the allowance grows to
``AT_XY`` as it comes down, so a small drift on the way does not send it back up."""
NEAR = 0.05
"""Horizontal distance from a grasp point beyond which a low hand first rises straight up."""
FAR = 0.10
"""Horizontal distance from a drop point beyond which a low hand holding an object first rises
straight up (a just-grasped object is at least 0.12 from any drop point; a hand lowering an object
can be pushed a few centimetres off, and keeps going down)."""
RELEASE_XY = 0.03
"""Horizontal distance from the drop point within which the lowered object is let go."""
GAIN = 10.0
"""Action per metre of position error (an action of 1 asks the controller for 5 cm)."""
ROTATION_SCALE = 0.5
"""Radians of rotation an action of 1 asks OSC_POSE for."""
DOWN = Rotation.from_quat([1.0, 0.0, 0.0, 0.0])
"""The hand pointing straight down (robosuite quaternions are x, y, z, w)."""
OPEN, CLOSE = -1.0, 1.0


def gap(state: np.ndarray) -> float:
    return float(state[FINGERS][0] - state[FINGERS][1])


def grasp_point(state: np.ndarray, obj: str) -> np.ndarray:
    return position(state, obj) + np.array([0.0, 0.0, GRASP_HEIGHT[obj]])


def holds(state: np.ndarray, obj: str) -> bool:
    """Fingers closed on ``obj``: gap at its width and the hand at its grasp point."""
    near = np.linalg.norm(state[EEF] - grasp_point(state, obj)) < HELD_RADIUS
    return bool(near and EMPTY_GAP < gap(state) < CONTACT_GAP[obj] + GRIP_MARGIN)


def approach(state: np.ndarray, obj: str, close: bool) -> tuple[np.ndarray, float]:
    """(target, grip) that bring the open hand over ``obj``, down to its grasp point and, with
    ``close``, shut the fingers there; fingers closed on nothing open again and the hand backs up."""
    point = grasp_point(state, obj)
    hover = point + np.array([0.0, 0.0, HOVER])
    hand = state[EEF]
    offset, height = float(np.linalg.norm(hand[:2] - point[:2])), float(hand[2] - point[2])
    if gap(state) < EMPTY_GAP:
        return hover, OPEN
    if close and offset < AT_XY and height < AT_Z:
        return point, CLOSE
    allowance = DESCEND_XY + (AT_XY - DESCEND_XY) * float(np.clip(1.0 - height / HOVER, 0.0, 1.0))
    if offset < allowance:
        return point, OPEN
    if offset > NEAR and height < HOVER - LOW:
        return np.array([*hand[:2], hover[2]]), OPEN  # straight up first: no sweeping through other objects
    return hover, OPEN


def carry(state: np.ndarray, drop: np.ndarray, release: bool) -> tuple[np.ndarray, float]:
    """(target, grip) for a held object: straight up to carrying height, over ``drop`` (an end-effector
    point), down to it and, with ``release``, open there."""
    hand = state[EEF]
    offset = float(np.linalg.norm(hand[:2] - drop[:2]))
    high = hand[2] > CARRY_Z - LOW
    if offset > FAR and not high:
        return np.array([*hand[:2], CARRY_Z]), CLOSE
    if high and offset > AT_XY:
        return np.array([*drop[:2], CARRY_Z]), CLOSE
    arrived = offset < RELEASE_XY and abs(hand[2] - drop[2]) < AT_Z
    return drop, (OPEN if release and arrived else CLOSE)


def basket_drop(state: np.ndarray, obj: str) -> np.ndarray:
    """The hand point that puts the held object's centre (not the hand) low over the basket's centre:
    an object released off-centre lies too close to a wall for the fingers to reach it again."""
    height = max(BASKET_FLOOR + REST_HEIGHT[obj] + GRASP_HEIGHT[obj] + DROP_GAP, OVER_RIM)
    offset = position(state, obj)[:2] - state[EEF][:2]
    return position(state, "basket") + np.array([-offset[0], -offset[1], height])


def aside_point(obj: str, start: np.ndarray) -> np.ndarray:
    """Put the object down ``ASIDE_SHIFT`` from its start, in the direction (of eight) that leaves it
    farthest from the other objects and the basket, just above its resting height."""
    here = position(start, obj)[:2]
    others = [position(start, name)[:2] for name in (*OBJECTS, "basket") if name != obj]
    angles = np.linspace(0.0, 2 * np.pi, 8, endpoint=False)
    candidates = here + ASIDE_SHIFT * np.stack([np.cos(angles), np.sin(angles)], axis=1)
    clearance = [min(np.linalg.norm(c - o) for o in others) - ASIDE_REACH_PENALTY * np.linalg.norm(c) for c in candidates]
    return np.array([*candidates[int(np.argmax(clearance))], position(start, obj)[2] + GRASP_HEIGHT[obj] + 0.01])


def drop_point(stage: Stage, state: np.ndarray, start: np.ndarray) -> np.ndarray:
    """Where the hand takes the held object in ``stage`` (grasp: straight up; out: away from the basket)."""
    obj, action = stage.obj, stage.action
    if action == "basket":
        return basket_drop(state, obj)
    if action.startswith("on:"):
        return position(state, action[3:]) + np.array([0.0, 0.0, RELEASE_ON])
    if action == "aside":
        return aside_point(obj, start)
    if action == "out":
        return np.array([*(position(state, "basket")[:2] + np.array([0.0, -OUT_SHIFT])), CARRY_Z])
    if action == "grasp":
        return np.array([*state[EEF][:2], CARRY_Z])
    raise ValueError(f"Libero-v0 expert: unknown stage action {action!r}")


def rotation_action(quaternion: np.ndarray) -> np.ndarray:
    """The OSC_POSE rotation command that turns the hand back to pointing straight down in one step."""
    error = (DOWN * Rotation.from_quat(quaternion).inv()).as_rotvec()
    return np.clip(error / ROTATION_SCALE, -1.0, 1.0)


def expert_action(stage: Stage, state: np.ndarray, start: np.ndarray) -> np.ndarray:
    """The expert's 7-d action in ``state`` while ``stage`` is the task's current stage."""
    if stage.action == "reach":
        target, grip = approach(state, stage.obj, close=False)
    elif holds(state, stage.obj):
        target, grip = carry(state, drop_point(stage, state, start), release=stage.action in ("aside", "basket") or stage.action.startswith("on:"))
    else:
        target, grip = approach(state, stage.obj, close=True)
    move = np.clip(GAIN * (target - state[EEF]), -1.0, 1.0)
    return np.concatenate([move, rotation_action(state[EEF_QUAT]), [grip]]).astype(np.float32)


class LiberoExpert:
    """``expert(env) -> action`` (float32 (7,) in [-1, 1]); it keeps no state between calls."""

    def __call__(self, env: "LiberoEnv") -> np.ndarray:
        task = env.spec_task
        assert task is not None, "Libero-v0: call reset() before asking the expert"
        stage = task.stages[min(env.stage, len(task.stages) - 1)]
        return expert_action(stage, env.state(), env.start_state)
