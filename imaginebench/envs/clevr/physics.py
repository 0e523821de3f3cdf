"""The MuJoCo scene (our own MJCF, no textures) and the push that every action performs.

The table is planar: balls slide on x/y joints with viscous damping and collide with each other
and the walls; the pusher collides with balls only (contact bits), as in the original. Gravity
and rolling play no part in a push, so they are left out, which keeps a push to 80 cheap
physics steps. After a push all velocities are zeroed, so the 10 ball coordinates are the
whole state (the env is Markov in its observation).
"""

from __future__ import annotations

import mujoco
import numpy as np

from imaginebench.envs.clevr.layout import BALL_RADIUS, COLORS, NUM_BALLS, WALL_X, WALL_Y, push_of

_RGBA = {
    "red": "0.9 0.1 0.1 1",
    "blue": "0.1 0.2 0.9 1",
    "green": "0.1 0.7 0.2 1",
    "purple": "0.6 0.2 0.8 1",
    "cyan": "0.1 0.8 0.8 1",
}
PUSHER_RADIUS = 0.05
PUSHER_GAP = 0.01
"""The pusher starts this far behind the ball's surface, opposite the push direction."""
PUSH_STEPS = 40
SETTLE_STEPS = 40
"""Physics steps (0.01 s each) with the motor on, then with it off so the balls come to rest.
A free push moves a ball about 0.15 along an axis, 0.12 per axis diagonally (as in the original)."""
_PARKED = (5.0, 5.0)
"""Where the pusher waits between pushes: off the table, touching nothing."""

_BALL_BITS = 'contype="3" conaffinity="3"'
_WALL_BITS = 'contype="2" conaffinity="2"'
_PUSHER_BITS = 'contype="1" conaffinity="1"'
"""Balls collide with everything, walls with balls, the pusher with balls."""


def scene_xml() -> str:
    """The scene: a table, four walls, five balls on slide joints, a motor-driven pusher."""
    cx, cy = (WALL_X[0] + WALL_X[1]) / 2, (WALL_Y[0] + WALL_Y[1]) / 2
    hx, hy, t = (WALL_X[1] - WALL_X[0]) / 2, (WALL_Y[1] - WALL_Y[0]) / 2, 0.05
    walls = "".join(
        f'<geom type="box" size="{sx} {sy} {BALL_RADIUS}" pos="{px} {py} {BALL_RADIUS}" rgba="0.5 0.4 0.3 1" {_WALL_BITS}/>'
        for sx, sy, px, py in (
            (t, hy + 2 * t, WALL_X[0] - t, cy),
            (t, hy + 2 * t, WALL_X[1] + t, cy),
            (hx, t, cx, WALL_Y[0] - t),
            (hx, t, cx, WALL_Y[1] + t),
        )
    )
    balls = "".join(
        f'<body name="{color}" pos="0 0 {BALL_RADIUS}">'
        f'<joint name="{color}_x" type="slide" axis="1 0 0" damping="8"/>'
        f'<joint name="{color}_y" type="slide" axis="0 1 0" damping="8"/>'
        f'<geom type="sphere" size="{BALL_RADIUS}" mass="1" rgba="{_RGBA[color]}" {_BALL_BITS}/></body>'
        for color in COLORS
    )
    return f"""<mujoco model="clevr_table">
  <option timestep="0.01" gravity="0 0 0" integrator="implicitfast"/>
  <default><geom friction="0 0 0" condim="1" solref="0.005 1"/></default>
  <worldbody>
    <light pos="0 0.2 3" dir="0 0 -1"/>
    <geom type="plane" size="{hx + 0.2} {hy + 0.2} 0.1" pos="{cx} {cy} 0" rgba="0.85 0.85 0.85 1" contype="0" conaffinity="0"/>
    {walls}{balls}
    <body name="pusher" pos="0 0 {BALL_RADIUS}">
      <joint name="pusher_x" type="slide" axis="1 0 0" damping="2"/>
      <joint name="pusher_y" type="slide" axis="0 1 0" damping="2"/>
      <geom type="sphere" size="{PUSHER_RADIUS}" mass="0.5" rgba="0.2 0.2 0.2 1" {_PUSHER_BITS}/>
    </body>
  </worldbody>
  <actuator>
    <motor joint="pusher_x" gear="4" ctrlrange="-1 1"/>
    <motor joint="pusher_y" gear="4" ctrlrange="-1 1"/>
  </actuator>
</mujoco>"""


class Table:
    """One simulated table. ``qpos`` is the balls' (x, y) in colour order, then the pusher's."""

    def __init__(self) -> None:
        self.model = mujoco.MjModel.from_xml_string(scene_xml())
        self.data = mujoco.MjData(self.model)
        self.set_positions(np.zeros((NUM_BALLS, 2)))

    def positions(self) -> np.ndarray:
        return self.data.qpos[: 2 * NUM_BALLS].reshape(NUM_BALLS, 2).copy()

    def set_positions(self, positions: np.ndarray) -> None:
        """Place the balls (at rest) and park the pusher."""
        self.data.qpos[: 2 * NUM_BALLS] = np.asarray(positions, dtype=np.float64).reshape(-1)
        self.data.qpos[2 * NUM_BALLS :] = _PARKED
        self.data.qvel[:] = 0.0
        self.data.ctrl[:] = 0.0
        mujoco.mj_forward(self.model, self.data)

    def push(self, action: int) -> np.ndarray:
        """Aim at the ball's *current* position (the original aimed at a stale layout after reset,
        quirk 2 of docs/original-benchmark.md), drive the pusher along the direction, let everything settle; return positions."""
        ball, direction = push_of(action)
        data = self.data
        centre = data.qpos[2 * ball : 2 * ball + 2].copy()
        data.qpos[2 * NUM_BALLS :] = centre - (BALL_RADIUS + PUSHER_RADIUS + PUSHER_GAP) * direction / np.linalg.norm(
            direction
        )
        data.qvel[:] = 0.0
        data.ctrl[:] = direction
        mujoco.mj_step(self.model, data, nstep=PUSH_STEPS)
        data.ctrl[:] = 0.0
        data.qpos[2 * NUM_BALLS :] = _PARKED
        data.qvel[2 * NUM_BALLS :] = 0.0
        mujoco.mj_step(self.model, data, nstep=SETTLE_STEPS)
        data.qvel[:] = 0.0
        mujoco.mj_forward(self.model, data)
        return self.positions()
