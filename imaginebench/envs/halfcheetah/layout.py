"""The 18-number HalfCheetah state (docs/original-benchmark.md#halfcheetah): the step's forward displacement, then gymnasium's 17
observations (qpos[1:], qvel). One source of truth for every index the tasks and checks read."""

from __future__ import annotations

import numpy as np

STATE_DIM = 18
DX = 0
"""Root x displacement during the step that led to this state (0 in the reset state; the original
put the absolute x there at reset, docs/original-benchmark.md#halfcheetah)."""
Z = 1
"""Torso height relative to the model's initial 0.7 m (about -0.13 when the cheetah stands)."""
PITCH = 2
"""Torso pitch in radians, unwrapped (a flip adds 2π)."""
JOINTS = slice(3, 9)
"""bthigh, bshin, bfoot, fthigh, fshin, ffoot angles."""
POSITIONS = slice(1, 9)
"""qpos[1:]: torso height, pitch and the joint angles (the root x is left out)."""
VX = 9
VZ = 10
VELOCITIES = slice(9, 18)
DT = 0.05
"""Seconds per step (frame skip 5 × 0.01 s)."""


def positions(states: np.ndarray) -> np.ndarray:
    """Root x relative to the episode's start at each state of a sequence read from the start."""
    return np.cumsum(np.asarray(states, dtype=np.float64)[:, DX])


def wrapped_pitch(states: np.ndarray) -> np.ndarray:
    return (np.asarray(states, dtype=np.float64)[..., PITCH] + np.pi) % (2 * np.pi) - np.pi
