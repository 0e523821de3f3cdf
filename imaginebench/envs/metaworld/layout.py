"""The fixed 91-number entity layout of the Meta-World state (docs/original-benchmark.md#meta-world), and its legality check.

One layout serves every task, so one policy input covers all of them: the gripper, the target
location, then one 7-number slot (position xyz + quaternion) per kind of entity. A task fills the
slots of the entities it uses; a distractor (one unused entity, drawn once per episode) fills one
more; every other slot is zero. Pure functions of arrays, usable on generated states.
"""

from __future__ import annotations

import numpy as np

from imaginebench.envs.base import malformed

GRIPPER = slice(0, 3)
"""Hand (end-effector body) position."""
GRIPPER_OPENING = 3
"""Finger distance / 0.1, clipped to [0, 1] by the package."""
TARGET = slice(4, 7)
"""The task's goal position (for composite tasks: the current stage's)."""

ENTITIES: tuple[str, ...] = (
    "target_object",
    "button",
    "lock",
    "handle",
    "window",
    "faucet",
    "wall",
    "coffee",
    "coffee_button",
    "hammer",
    "nail",
    "soccer",
)
"""Entity slots in layout order, each 7 numbers (xyz, quaternion) starting at index 7."""
ENTITY_SIZE = 7
FIRST_ENTITY = 7
STATE_DIM = FIRST_ENTITY + ENTITY_SIZE * len(ENTITIES)
IDENTITY_QUAT = np.array([1.0, 0.0, 0.0, 0.0])

WORKSPACE_LOW = np.array([-0.525, 0.348, -0.0525])
WORKSPACE_HIGH = np.array([0.525, 1.025, 0.7])
"""Where the hand can be: the package's ``SawyerXYZEnv._HAND_SPACE`` (observations are clipped to it)."""
TABLE_Z = 0.0
"""Height of the table top; every object rests on or above it."""
LEGALITY_MARGIN = 0.02
"""Slack for the legality check: contact penetration and float noise (objects sink ~1 cm into the table)."""
QUAT_NORM_TOLERANCE = 0.02


def entity_slice(name: str) -> slice:
    start = FIRST_ENTITY + ENTITY_SIZE * ENTITIES.index(name)
    return slice(start, start + ENTITY_SIZE)


def entity_position(state: np.ndarray, name: str) -> np.ndarray:
    start = FIRST_ENTITY + ENTITY_SIZE * ENTITIES.index(name)
    return state[start : start + 3]


def entity_present(state: np.ndarray, name: str) -> bool:
    """An entity slot that is all zero is absent from the scene."""
    return bool(np.any(state[entity_slice(name)] != 0.0))


def entity_row(position: np.ndarray, quaternion: np.ndarray) -> np.ndarray:
    """Position + quaternion; an all-zero quaternion (the package reports none for some sites,
    e.g. the window handle) becomes the identity so every present entity has a unit quaternion."""
    quaternion = np.asarray(quaternion, dtype=np.float64)
    if not np.any(quaternion):
        quaternion = IDENTITY_QUAT
    return np.concatenate([np.asarray(position, dtype=np.float64), quaternion])


def compose_state(
    gripper: np.ndarray, opening: float, target: np.ndarray, entities: dict[str, np.ndarray]
) -> np.ndarray:
    """The 91-number state from its parts; ``entities`` maps slot name → 7 numbers."""
    state = np.zeros(STATE_DIM)
    state[GRIPPER] = gripper
    state[GRIPPER_OPENING] = opening
    state[TARGET] = target
    for name, row in entities.items():
        state[entity_slice(name)] = row
    return state


def state_violations(state: np.ndarray) -> list[str]:
    """Why ``state`` cannot occur: hand outside the workspace, gripper opening outside [0, 1],
    a present entity below the table or with a non-unit quaternion, a non-finite number."""
    state = np.asarray(state, dtype=np.float64)
    if reasons := malformed(state, STATE_DIM):
        return reasons
    reasons = []
    hand = state[GRIPPER]
    if np.any(hand < WORKSPACE_LOW - LEGALITY_MARGIN) or np.any(hand > WORKSPACE_HIGH + LEGALITY_MARGIN):
        reasons.append(f"gripper {np.round(hand, 3).tolist()} is outside the workspace")
    if not -LEGALITY_MARGIN <= state[GRIPPER_OPENING] <= 1.0 + LEGALITY_MARGIN:
        reasons.append(f"gripper opening {state[GRIPPER_OPENING]:.3f} is outside [0, 1]")
    for name in ENTITIES:
        if not entity_present(state, name):
            continue
        row = state[entity_slice(name)]
        if row[2] < TABLE_Z - LEGALITY_MARGIN:
            reasons.append(f"{name} is below the table (z = {row[2]:.3f})")
        norm = float(np.linalg.norm(row[3:]))
        if abs(norm - 1.0) > QUAT_NORM_TOLERANCE:
            reasons.append(f"{name} quaternion has norm {norm:.3f}, not 1")
    return reasons
