"""The 18-number HalfCheetah state (docs/original-benchmark.md#halfcheetah): the step's forward displacement, then gymnasium's 17
observations (qpos[1:], qvel). One source of truth for every index the tasks and checks read, and which states a
HalfCheetah can be in (for judging imagined states).

Joint angles must lie within the model's ``jnt_range`` (MuJoCo's limits are soft, so a real
joint overshoots them a little: ``JOINT_MARGIN``); every number must be finite; velocities, the
step's displacement and the torso height must stay within bounds a little wider than anything
measured in real episodes (random, zero and expert actions; see the constants)."""

from __future__ import annotations

import numpy as np

from imaginebench.envs.base import malformed

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


JOINT_RANGES = np.array([[-0.52, 1.05], [-0.785, 0.785], [-0.4, 0.785], [-1.0, 0.7], [-1.2, 0.87], [-0.5, 0.5]])
"""bthigh, bshin, bfoot, fthigh, fshin, ffoot limits (radians) of gymnasium's half_cheetah.xml
(a test compares them with the compiled model)."""
JOINT_MARGIN = 0.3
"""Overshoot of a soft joint limit still taken as real (radians); measured up to 0.19 (jumping
expert), 0.18 in the 87k states of the default data, 0.14 with random actions."""
VELOCITY_BOUNDS = np.array([20.0, 15.0, 30.0, 40.0, 40.0, 40.0, 40.0, 40.0, 40.0])
"""|vx|, |vz|, |pitch rate|, |joint speeds| bounds (m/s, rad/s); measured at most 5.3, 4.7, 9.7
and 27.4 (experts and random actions)."""
MAX_SPEED = 20.0
"""m/s: bounds the per-step displacement (``MAX_SPEED · DT``)."""
Z_RANGE = (-0.6, 1.2)
"""Torso height relative to its start (m); measured -0.4 to 0.69."""
STATE_TOLERANCE = 0.01
"""The simulator is deterministic given the start and the actions; only float32 storage differs."""


def state_violations(state: np.ndarray) -> list[str]:
    """Reasons ``state`` cannot occur; empty when it is legal."""
    state = np.asarray(state, dtype=np.float64)
    if reasons := malformed(state, STATE_DIM):
        return reasons
    reasons = []
    if abs(state[DX]) > MAX_SPEED * DT:
        reasons.append(f"displacement {state[DX]:.3f} m in one step exceeds {MAX_SPEED * DT:.2f}")
    if not Z_RANGE[0] <= state[Z] <= Z_RANGE[1]:
        reasons.append(f"torso height {state[Z]:.3f} outside {Z_RANGE}")
    angles = state[JOINTS]
    outside = (angles < JOINT_RANGES[:, 0] - JOINT_MARGIN) | (angles > JOINT_RANGES[:, 1] + JOINT_MARGIN)
    reasons += [f"joint {k} angle {angles[k]:.3f} outside {JOINT_RANGES[k].tolist()}" for k in np.flatnonzero(outside)]
    too_fast = np.abs(state[VELOCITIES]) > VELOCITY_BOUNDS
    reasons += [
        f"velocity {k} = {state[VELOCITIES][k]:.2f} exceeds {VELOCITY_BOUNDS[k]}" for k in np.flatnonzero(too_fast)
    ]
    return reasons
