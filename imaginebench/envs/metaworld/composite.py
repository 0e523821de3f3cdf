"""The two composite hard tasks, built from the package's own environments (docs/original-benchmark.md#meta-world).

make-coffee runs in the package's coffee-push scene, which already holds the coffee machine and its
button: stage 1 pushes the mug under the spout (the package's coffee-push goal), stage 2 presses the
machine's button (the package's coffee-button criterion, read from the button itself).

locked-door-open needs a door that is both locked and hinged. The package's door-lock scene (the
safe) has a fixed door, so the scene is compiled with one hinge joint added to the door through
``mujoco.MjSpec``, with no edited copy of the package's XML; the lock and every other joint are then
addressed by name, so the extra joint shifts nothing (the original's shifted ``qpos[9]`` made its
door-unlock expert fail, quirk 5 of docs/original-benchmark.md).
"""

from __future__ import annotations

import mujoco
import numpy as np
from metaworld.env_dict import ALL_V3_ENVIRONMENTS

from imaginebench.envs.metaworld.layout import entity_row

BUTTON_TRAVEL = 0.03
"""How far the coffee-machine button must be pushed in (the package's coffee-button ``max_dist``)."""
DOOR_HINGE_RANGE = (-2.0, 0.0)
"""Door angle in radians; negative swings the handle side toward the robot."""
DOOR_DAMPING = 1.0
"""Hinge damping (N·m·s/rad): the door stays where the gripper leaves it instead of swinging on."""
DOOR_OPEN_ANGLE = -0.4
"""The door counts as open when its handle is within 4 cm of where this angle (23 degrees) puts it.
The Sawyer hand keeps its orientation, so while it holds the handle bar it meets the swinging door at
about 0.46 rad: no expert can open this door much further (measured with the stage-2 script below)."""
HANDLE_ON_DOOR = np.array([0.38, -0.12, -0.05])
"""The middle of the safe door's handle bar (a bar along x, 2 cm thick) in the door's frame (the package's doorlockA model)."""


# ----------------------------------------------------------------------------- make-coffee


def coffee_button_row(sim) -> np.ndarray:
    return entity_row(sim._get_site_pos("buttonStart"), np.zeros(4))


def coffee_button_target(sim) -> np.ndarray:
    """Where the button must be pushed to: its rest position moved ``BUTTON_TRAVEL`` into the machine."""
    return sim._get_site_pos("buttonStart") + np.array([0.0, BUTTON_TRAVEL, 0.0])


# ----------------------------------------------------------------------------- locked-door-open


class LockedDoorSim(ALL_V3_ENVIRONMENTS["door-unlock-v3"]):
    """The package's door-unlock env whose door also swings open on a hinge."""

    def _initialize_simulation(self):
        spec = mujoco.MjSpec.from_file(self.fullpath)
        door = spec.body("door_link")
        door.add_joint(
            name="door_hinge",
            type=mujoco.mjtJoint.mjJNT_HINGE,
            axis=[0, 0, 1],
            range=list(DOOR_HINGE_RANGE),
            limited=True,
            damping=DOOR_DAMPING,
        )
        door.add_site(name="door_handle", pos=HANDLE_ON_DOOR, size=[0.005, 0.005, 0.005])
        model = spec.compile()
        return model, mujoco.MjData(model)

    def _set_obj_xyz(self, pos) -> None:
        """The package sets the lock angle through ``qpos[9]``; address the lock joint by name instead
        and keep the door closed."""
        lock = self.model.joint(self.model.body("lock_link").jntadr[0])
        self.data.qpos[lock.qposadr[0]] = pos
        self.data.qvel[lock.dofadr[0]] = 0.0
        hinge = self.model.joint("door_hinge")
        self.data.qpos[hinge.qposadr[0]] = 0.0
        self.data.qvel[hinge.dofadr[0]] = 0.0
        mujoco.mj_forward(self.model, self.data)


def door_handle_row(sim) -> np.ndarray:
    return entity_row(sim._get_site_pos("door_handle"), sim.data.body("door_link").xquat)


def door_open_target(sim) -> np.ndarray:
    """The handle's position with the door at ``DOOR_OPEN_ANGLE`` (computed from the closed door's frame)."""
    body = sim.data.body("door_link")
    hinge, rotation = body.xpos.copy(), body.xmat.reshape(3, 3)
    c, s = np.cos(DOOR_OPEN_ANGLE), np.sin(DOOR_OPEN_ANGLE)
    turn = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    return hinge + rotation @ turn @ HANDLE_ON_DOOR


class DoorPullPolicy:
    """Stage 2 of locked-door-open: grasp the handle bar from above and pull it toward the open target.

    The package's door-open expert pushes a handle shaped differently (it opens this door by only
    ~0.3 rad), so this stage has its own script, written for imaginebench. It reads the package's
    observation layout like the package policies: hand, gripper opening, handle (``obs[4:7]``), goal.
    """

    GRASP_RADIUS = 0.02
    CLOSED_OPENING = 0.6
    """Gripper opening below which the fingers are taken to hold the bar."""

    def get_action(self, obs: np.ndarray) -> np.ndarray:
        tcp = obs[:3] + np.array([0.0, 0.0, -0.045])
        bar, target = obs[4:7], obs[-3:]
        if np.linalg.norm(tcp - bar) > self.GRASP_RADIUS:
            above = bar + np.array([0.0, 0.0, 0.06])
            goal = above if np.linalg.norm(tcp[:2] - bar[:2]) > self.GRASP_RADIUS else bar
            return self._move(tcp, goal, grip=-1.0)
        if obs[3] > self.CLOSED_OPENING:
            return self._move(tcp, bar, grip=1.0)
        pull = target - bar
        return self._move(tcp, bar + 0.05 * pull / max(np.linalg.norm(pull), 1e-6), grip=1.0)

    @staticmethod
    def _move(tcp: np.ndarray, goal: np.ndarray, grip: float) -> np.ndarray:
        return np.append(np.clip(25.0 * (goal - tcp), -1.0, 1.0), grip)
