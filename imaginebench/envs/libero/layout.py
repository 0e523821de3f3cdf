"""The 44-number LIBERO state (docs/original-benchmark.md#libero): robot, then position + quaternion of each object.

joint positions 7 | end-effector position 3 | end-effector quaternion 4 | gripper finger positions 2 |
alphabet soup 7 | cream cheese 7 | salad dressing 7 | basket 7 (each xyz + quaternion).
"""

from __future__ import annotations

import numpy as np

from imaginebench.envs.base import malformed

STATE_DIM = 44
JOINTS = slice(0, 7)
EEF = slice(7, 10)
EEF_QUAT = slice(10, 14)
FINGERS = slice(14, 16)
OBJECTS: tuple[str, ...] = ("alphabet_soup", "cream_cheese", "salad_dressing")
"""The graspable objects, in state order; the basket follows them."""
ENTITIES: tuple[str, ...] = (*OBJECTS, "basket")
NAMES: dict[str, str] = {
    "alphabet_soup": "alphabet soup",
    "cream_cheese": "cream cheese",
    "salad_dressing": "salad dressing",
}
"""Object → the words instructions use for it."""
SHORT: dict[str, str] = {"alphabet_soup": "soup", "cream_cheese": "cheese", "salad_dressing": "dressing"}
"""Object → its short name in task names (``pick-soup``), as the original's."""

OBJECT_AREA = ((-0.24, 0.10), (-0.30, 0.06))
"""x and y ranges objects start in (in front of the robot, whose base is at x -0.6, within easy reach)."""
HAND_HALF = np.array([0.035, 0.105])
"""Half-extent in x and y of the pointing-down Panda hand around its end effector (its collision
geoms, measured: -3.0..3.9 cm and ±10.4 cm; the fingers close along y)."""
OBJECT_RADIUS = 0.035
"""Largest horizontal half-width of the soup, cheese and dressing."""
BASKET_HALF = 0.09
"""Horizontal half-width of the basket's outside (7.5 cm inside, 1.3 cm walls)."""
FLOOR_LIMIT = 0.6
"""|x|, |y| bound of the floor area objects and the gripper can legally be in (the scene's floor region)."""


def in_object_area(xy: np.ndarray) -> np.ndarray:
    """Whether xy points (shape (..., 2)) lie in ``OBJECT_AREA``, bounds included."""
    low, high = np.array(OBJECT_AREA).T
    return np.all((xy >= low) & (xy <= high), axis=-1)


def hand_fits(hand: np.ndarray, obstacle: np.ndarray, half_width: float = OBJECT_RADIUS) -> bool:
    """Whether the pointing-down hand over xy ``hand`` can come down beside an obstacle of that
    half-width standing at xy ``obstacle`` (their footprints do not overlap)."""
    return bool(np.any(np.abs(hand - obstacle) >= HAND_HALF + half_width))


def entity_slice(name: str) -> slice:
    start = 16 + 7 * ENTITIES.index(name)
    return slice(start, start + 7)


def position(state: np.ndarray, name: str) -> np.ndarray:
    """xyz of an entity's body."""
    return state[entity_slice(name)][:3]


def compose_state(joints, eef, eef_quat, fingers, entities: dict[str, np.ndarray]) -> np.ndarray:
    """A 44-number state from its parts; ``entities`` maps every entity to its 7-number row."""
    missing = set(ENTITIES) - set(entities)
    if missing:
        raise ValueError(f"Libero-v0: state needs every entity; missing {sorted(missing)}")
    parts = [joints, eef, eef_quat, fingers, *(entities[name] for name in ENTITIES)]
    state = np.concatenate([np.asarray(part, dtype=np.float64).reshape(-1) for part in parts])
    assert state.shape == (STATE_DIM,)
    return state


def state_violations(state: np.ndarray) -> list[str]:
    """Why a 44-number state cannot occur: non-finite numbers, non-unit quaternions, objects under the
    floor or off it, fingers out of their travel."""
    state = np.asarray(state, dtype=np.float64)
    if reasons := malformed(state, STATE_DIM):
        return reasons
    reasons = []
    quaternions = {"eef": state[EEF_QUAT], **{name: state[entity_slice(name)][3:] for name in ENTITIES}}
    reasons += [
        f"{name} quaternion is not unit" for name, q in quaternions.items() if abs(np.linalg.norm(q) - 1.0) > 0.02
    ]
    for name in ENTITIES:
        xyz = position(state, name)
        if xyz[2] < -0.01:
            reasons.append(f"{name} is below the floor")
        if np.any(np.abs(xyz[:2]) > FLOOR_LIMIT):
            reasons.append(f"{name} is off the floor area")
    if np.any(np.abs(state[FINGERS]) > 0.05):
        reasons.append("gripper fingers beyond their travel")
    return reasons
