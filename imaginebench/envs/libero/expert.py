"""Scripted expert whose action is a function of the 44-number state, the task's current stage and
the episode's first state only (no counters, no remembered waypoints), so behaviour cloning sees a
policy it can copy: a learner that only observes the state cannot imitate an expert phase that the
state does not show.

Each skill reads its phase off the state: the hand's offset from the object's grasp point, the
finger gap (open, closing, closed on the object, closed on nothing) and the hand's height. The hand
is turned back to its goal orientation every step (the rotation part of the action), so a learner's
small rotation errors are corrected in the data instead of accumulating: pointing straight down,
turned about the vertical only for a can lying on its side, and rolled over only while pouring.

Objects lying in the basket low enough that the hand, resting on the rim, cannot reach them (soup
and cheese; the tall dressing can be grasped there) are poured out: the hand grips the basket's
near wall off-centre, lifts it, rolls it over until the object falls to the floor, sets the basket
down and then picks the object off the floor.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from scipy.spatial.transform import Rotation

from imaginebench.envs.libero.layout import (
    BASKET_HALF,
    EEF,
    EEF_QUAT,
    FINGERS,
    OBJECT_RADIUS,
    OBJECTS,
    entity_slice,
    hand_fits,
    in_object_area,
    position,
)
from imaginebench.envs.libero.tasks import Stage

if TYPE_CHECKING:
    from imaginebench.envs.libero.env import LiberoEnv

GRASP_HEIGHT = {"alphabet_soup": 0.02, "cream_cheese": 0.0, "salad_dressing": 0.03}
"""End-effector height above an object's body origin at which its fingers close on it."""
LYING_GRASP_HEIGHT = 0.01
"""The same for the soup can lying on its side (its body origin is on its axis)."""
CAN_AXIS = np.array([0.0, 1.0, 0.0])
"""The soup can's axis in its body frame (upright: vertical)."""
REST_HEIGHT = {"alphabet_soup": 0.038, "cream_cheese": 0.009, "salad_dressing": 0.073}
"""Height of an object's body origin above what it stands on (measured on the settled scene)."""
TOP_HEIGHT = {"alphabet_soup": 0.046, "cream_cheese": 0.009, "salad_dressing": 0.077}
"""Height of an object's top above its body origin, standing (8.4, 1.8 and 15 cm tall)."""
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
RIM_CLEAR = 0.22
"""End-effector height above the basket's origin a hand over the basket rises to before it moves off
sideways (its fingertips, 1.3 cm below, clear the 14.8 cm rim). Moving off at 13 cm, straight for the
hover point over the low cheese, it dragged the basket along and tipped it over (2 of 20
sequential-pick-and-place-all episodes)."""
CARRY_Z = 0.30
"""End-effector height for carrying (clears the basket's 0.14 rim with the 0.15 long dressing held)."""
LOW = 0.04
"""A held object is lifted straight up until the hand is within this of ``CARRY_Z``."""
BESIDE = 0.04
"""Shift of the drop point from the basket's centre, away from an object already in the basket: lowered
over the centre, the cheese landed on the dressing standing there, and the hand hung above the height
at which it lets go (sequential-pick-and-place-dressing-and-cheese, 3 of 10 episodes)."""
DROP_GAP = 0.025
"""Height above the basket floor at which an object is released (low, so that it lands upright)."""
RELEASE_ON = 0.14
"""End-effector height above the body of the object another is placed on, where it opens."""
ASIDE_SHIFT = 0.16
ASIDE_REACH_PENALTY = 0.2
"""Preference for put-down points near the middle of the floor area (within comfortable reach)."""
OUT_SHIFT = 0.47
"""Distance from the basket at which an object taken out of it is carried (success needs 0.35-0.45)."""
WORK_CENTRE = np.array([-0.07, -0.12])
"""Middle of the floor area objects start in: taken-out objects go from the basket towards it."""
RIM_GRIP = np.array([-0.069, -0.045, 0.115])
"""Where the hand grips the basket to pour it, in the basket's body frame (the hand closes up to ``AT_Z``
above it, the pads 1-2 cm down the 14.8 cm wall): the top of the wall
facing the objects' area, 4.5 cm off the wall's middle, so the object falls out past the hand
instead of onto it (the basket stands turned 90° about the vertical in every start)."""
RIM_GAP = (0.008, 0.03)
"""Finger gap of fingers closed on the basket's wall (1.3 cm thick); thinner than every object."""
RIM_HELD_RADIUS = 0.08
POUR_Z = 0.35
"""End-effector height at which the lifted basket is rolled over."""
POUR_X = -0.05
"""End-effector x (the robot's base is at x -0.6) over which the lifted basket is rolled: farther out,
turning the hand back after letting go of the basket straightened the elbow into a singular pose the
controller never left (5 of 12 soup episodes stuck with the elbow at its limit, pouring at the basket's
start x 0.0-0.1); the object falls in the middle of the floor area, within easy reach."""
POUR_ROLL = -130.0
"""Degrees about the world x axis the hand rolls to pour: the basket's opening turns down and away."""
TILTED = 0.7
"""Vertical component of the basket's up axis below which it counts as being rolled over (held off
centre, the lifted basket hangs tilted by up to ~30°)."""
SET_DOWN_Z = 0.28
"""End-effector height at which the emptied basket is let go. Let go at 0.22, the hand turning back
swept the wrist (robot link 6, below the rolled hand on the can's side) through the fallen can and
knocked it towards the robot's base, out of reach (every soup failure in 24 episodes; 0.28: none in 12)."""
BASKET_CLEARANCE = 0.4
"""Distance along y from the fallen object at which the emptied basket is let go: it may land on its
side, 15 cm long, and the hand is 20 cm across the fingers. Along y only (the rolled basket hangs to
the hand's side in y), so the arm is not stretched out in x (see ``POUR_X``)."""
BASKET_INSIDE = np.array([0.075, 0.075, 0.15])
"""Half-widths and height of the basket's inside, in its body frame."""
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
POURING = Rotation.from_euler("x", POUR_ROLL, degrees=True) * DOWN
"""The hand rolled over to pour the basket out."""
OPEN, CLOSE = -1.0, 1.0


def gap(state: np.ndarray) -> float:
    return float(state[FINGERS][0] - state[FINGERS][1])


def towards(origin: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Unit vector from ``origin`` to ``target``."""
    return (target - origin) / max(float(np.linalg.norm(target - origin)), 1e-6)


def body_rotation(state: np.ndarray, name: str) -> Rotation:
    return Rotation.from_quat(state[entity_slice(name)][3:])


def lying_can_axis(state: np.ndarray, obj: str) -> np.ndarray | None:
    """The horizontal direction of the soup can's axis when it lies on its side, else None."""
    if obj != "alphabet_soup":
        return None
    axis = body_rotation(state, obj).apply(CAN_AXIS)
    return axis[:2] / np.linalg.norm(axis[:2]) if abs(axis[2]) < 0.7 else None


def grasp_point(state: np.ndarray, obj: str) -> np.ndarray:
    height = GRASP_HEIGHT[obj] if lying_can_axis(state, obj) is None else LYING_GRASP_HEIGHT
    return position(state, obj) + np.array([0.0, 0.0, height])


def grasp_orientation(state: np.ndarray, obj: str) -> Rotation:
    """Pointing down; for a lying can turned about the vertical so the fingers close across it
    (they close along the world y axis when the hand is not turned)."""
    axis = lying_can_axis(state, obj)
    if axis is None:
        return DOWN
    yaw = (np.arctan2(axis[1], axis[0]) + np.pi / 2) % np.pi - np.pi / 2  # the fingers are symmetric
    return Rotation.from_euler("z", yaw) * DOWN


def in_basket(state: np.ndarray, obj: str) -> bool:
    """The object's body inside the basket's walls (in the basket's frame, so also when tilted)."""
    local = body_rotation(state, "basket").inv().apply(position(state, obj) - position(state, "basket"))
    return bool(np.all(np.abs(local[:2]) < BASKET_INSIDE[:2]) and 0.0 < local[2] < BASKET_INSIDE[2])


def out_of_reach_in_basket(state: np.ndarray, obj: str) -> bool:
    """In the upright basket with its grasp point lower than the hand can go there."""
    return in_basket(state, obj) and grasp_point(state, obj)[2] - position(state, "basket")[2] < OVER_RIM


def rim_grip_point(state: np.ndarray) -> np.ndarray:
    return position(state, "basket") + body_rotation(state, "basket").apply(RIM_GRIP)


def holds_basket(state: np.ndarray) -> bool:
    """Fingers closed on something as thin as the basket's wall, near where the hand grips it (the
    lifted basket swings a little about the grip)."""
    near = np.linalg.norm(state[EEF] - rim_grip_point(state)) < RIM_HELD_RADIUS
    return bool(near and RIM_GAP[0] < gap(state) < RIM_GAP[1])


def holds(state: np.ndarray, obj: str) -> bool:
    """Fingers closed on ``obj``: gap at its width and the hand at its grasp point."""
    near = np.linalg.norm(state[EEF] - grasp_point(state, obj)) < HELD_RADIUS
    return bool(near and EMPTY_GAP < gap(state) < CONTACT_GAP[obj] + GRIP_MARGIN)


def approach(state: np.ndarray, point: np.ndarray, close: bool) -> tuple[np.ndarray, float]:
    """(target, grip) that bring the open hand over ``point``, down to it and, with ``close``, shut
    the fingers there; fingers closed on nothing open again and the hand backs up."""
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
    basket = position(state, "basket")
    rim_clear = basket[2] + RIM_CLEAR
    low_over_basket = hand[2] < rim_clear - LOW and not hand_fits(hand[:2], basket[:2], BASKET_HALF)
    if offset > NEAR and low_over_basket:
        return np.array([*hand[:2], max(hover[2], rim_clear)]), OPEN
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


def pour(state: np.ndarray, obj: str) -> tuple[np.ndarray, float, Rotation]:
    """(target, grip, orientation) for the held basket: lift it, bring it over ``POUR_X``, roll it over
    until ``obj`` falls out, then carry it clear of the object along y, lower it and let go."""
    hand = state[EEF]
    if in_basket(state, obj):
        tilted = body_rotation(state, "basket").apply([0.0, 0.0, 1.0])[2] < TILTED
        high = hand[2] > POUR_Z - AT_Z
        target = np.array([POUR_X, hand[1], POUR_Z]) if high or tilted else np.array([*hand[:2], POUR_Z])
        roll = tilted or (high and abs(hand[0] - POUR_X) < AT_XY)
        return target, CLOSE, POURING if roll else DOWN
    basket_y, fallen_y = position(state, "basket")[1], position(state, obj)[1]
    side = 1.0 if basket_y > fallen_y else -1.0
    shift = fallen_y + side * BASKET_CLEARANCE - basket_y  # the basket hangs beside the hand: move it, not the hand
    target = np.array([hand[0], hand[1] + shift, SET_DOWN_Z])
    arrived = abs(shift) < AT_XY + 0.01 and hand[2] < SET_DOWN_Z + AT_Z
    return (
        target,
        OPEN if arrived else CLOSE,
        POURING,
    )  # still rolled: turning back swings the basket out of the fingers


def basket_drop(state: np.ndarray, obj: str) -> np.ndarray:
    """The hand point that puts the held object's centre (not the hand) low over the basket's centre:
    an object released off-centre lies too close to a wall for the fingers to reach it again. Objects
    already in the basket push that point ``BESIDE`` away from them; one still under it raises the
    point to just above its top (lowered onto the can standing near the centre, the cheese held the
    hand 3 cm above its release height until the horizon: 1 of 20 all-three episodes)."""
    height = max(BASKET_FLOOR + REST_HEIGHT[obj] + GRASP_HEIGHT[obj] + DROP_GAP, OVER_RIM)
    basket = position(state, "basket")
    already_in = [other for other in OBJECTS if other != obj and in_basket(state, other)]
    centre = basket[:2].copy()
    for other in already_in:
        centre += BESIDE * towards(position(state, other)[:2], basket[:2])
    offset = position(state, obj)[:2] - state[EEF][:2]
    z = basket[2] + height
    for other in already_in:
        if np.linalg.norm(position(state, other)[:2] - centre) < 2 * OBJECT_RADIUS:
            z = max(z, position(state, other)[2] + TOP_HEIGHT[other] + REST_HEIGHT[obj] + GRASP_HEIGHT[obj] + DROP_GAP)
    return np.array([*(centre - offset), z])


def aside_point(obj: str, start: np.ndarray) -> np.ndarray:
    """Put the object down ``ASIDE_SHIFT`` from its start, in the direction (of eight) that leaves it
    farthest from the other objects and the basket, just above its resting height. Only points inside
    the objects' start area count: at x -0.40 the hand could not get down (2 of 10 aside-soup episodes),
    at x 0.19 it could not reach out at carrying height (2 of 10 aside-cheese). Points where the hand,
    coming down, lands on another object or the basket's rim are taken only when no other is left
    (1 of 10 aside-cheese episodes hung on the rim)."""
    here = position(start, obj)[:2]
    others = [position(start, name)[:2] for name in OBJECTS if name != obj]
    basket = position(start, "basket")[:2]
    angles = np.linspace(0.0, 2 * np.pi, 8, endpoint=False)
    candidates = here + ASIDE_SHIFT * np.stack([np.cos(angles), np.sin(angles)], axis=1)
    candidates = candidates[
        in_object_area(candidates)
    ]  # a move along x and one along y always remain: the area is over twice the shift across
    roomy = [
        c for c in candidates if all(hand_fits(c, other) for other in others) and hand_fits(c, basket, BASKET_HALF)
    ]
    pool = np.array(roomy) if roomy else candidates
    clearance = [
        min(np.linalg.norm(c - o) for o in (*others, basket)) - ASIDE_REACH_PENALTY * np.linalg.norm(c) for c in pool
    ]
    return np.array([*pool[int(np.argmax(clearance))], position(start, obj)[2] + GRASP_HEIGHT[obj] + 0.01])


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
        basket = position(state, "basket")[:2]
        return np.array([*(basket + OUT_SHIFT * towards(basket, WORK_CENTRE)), CARRY_Z])
    if action == "grasp":
        return np.array([*state[EEF][:2], CARRY_Z])
    raise ValueError(f"Libero-v0 expert: unknown stage action {action!r}")


def rotation_action(quaternion: np.ndarray, goal: Rotation = DOWN) -> np.ndarray:
    """The OSC_POSE rotation command that turns the hand to ``goal`` in one step (clipped)."""
    error = (goal * Rotation.from_quat(quaternion).inv()).as_rotvec()
    return np.clip(error / ROTATION_SCALE, -1.0, 1.0)


def still_held_in_basket(state: np.ndarray, obj: str) -> str | None:
    """An object other than ``obj`` that the hand still holds inside the basket: a basket stage
    completes as soon as the object's body is below the rim, while the hand is still lowering it.
    Moved on from there, the hand dragged it against the wall and tipped the basket over (9 of 13
    sequential-pick-and-place-all episodes; 2 failed)."""
    return next((other for other in OBJECTS if other != obj and in_basket(state, other) and holds(state, other)), None)


def expert_action(stage: Stage, state: np.ndarray, start: np.ndarray) -> np.ndarray:
    """The expert's 7-d action in ``state`` while ``stage`` is the task's current stage."""
    obj, goal = stage.obj, grasp_orientation(state, stage.obj)
    if stage.action == "reach":
        target, grip = approach(state, grasp_point(state, obj), close=False)
    elif holds(state, obj):
        target, grip = carry(
            state,
            drop_point(stage, state, start),
            release=stage.action in ("aside", "basket") or stage.action.startswith("on:"),
        )
    elif (held := still_held_in_basket(state, obj)) is not None:
        target, grip = carry(state, basket_drop(state, held), release=True)
        goal = DOWN
    elif holds_basket(state):
        target, grip, goal = pour(state, obj)
    elif out_of_reach_in_basket(state, obj):
        target, grip = approach(state, rim_grip_point(state), close=True)
        goal = DOWN
    else:
        target, grip = approach(state, grasp_point(state, obj), close=True)
    move = np.clip(GAIN * (target - state[EEF]), -1.0, 1.0)
    return np.concatenate([move, rotation_action(state[EEF_QUAT], goal), [grip]]).astype(np.float32)


class LiberoExpert:
    """``expert(env) -> action`` (float32 (7,) in [-1, 1]); it keeps no state between calls."""

    def __call__(self, env: LiberoEnv) -> np.ndarray:
        task = env.spec_task
        assert task is not None, "Libero-v0: call reset() before asking the expert"
        stage = task.stages[min(env.stage, len(task.stages) - 1)]
        return expert_action(stage, env.state(), env.start_state)
