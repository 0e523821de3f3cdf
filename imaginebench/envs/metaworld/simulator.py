"""The package simulators behind each task, and reading them into the entity layout."""

from __future__ import annotations

import mujoco
import numpy as np
from metaworld.env_dict import ALL_V3_ENVIRONMENTS
from metaworld.sawyer_xyz_env import SawyerXYZEnv

from imaginebench.envs.metaworld import composite
from imaginebench.envs.metaworld.layout import entity_row
from imaginebench.envs.metaworld.tasks import Task
from imaginebench.upstream.gymnasium_mujoco import compiling_scene_once

PACKAGE_OBJECT_SLOTS = (slice(4, 11), slice(11, 18))
"""Position + quaternion of the package observation's first and second object."""

COMPOSITE_STAGE_TWO = {
    "make-coffee": ("coffee_button", composite.coffee_button_row, composite.coffee_button_target),
    "locked-door-open": ("handle", composite.door_handle_row, composite.door_open_target),
}
"""Composite task → (the entity its second stage adds, how to read it, its second target)."""


def build_sim(task: Task) -> SawyerXYZEnv:
    """A package env for ``task`` with the goal revealed and its layout drawn from its own
    ``np_random`` at every reset (seed it with ``sim.seed``); the horizon is ours, not the package's."""
    cls = composite.LockedDoorSim if task.name == "locked-door-open" else ALL_V3_ENVIRONMENTS[task.source]
    sim = compiling_scene_once(cls)()
    sim._partially_observable = False  # reveal the goal (as the package's goal-observable variants do)
    sim._freeze_rand_vec = False
    sim.seeded_rand_vec = True
    sim._set_task_called = True
    sim.max_path_length = 1 << 30
    sim.seed(0)
    sim.reset()
    return sim


def reset_observation(sim: SawyerXYZEnv) -> np.ndarray:
    """The package's reset, observed once MuJoCo has placed the bodies. Some tasks' ``reset_model`` writes joint
    positions after the last computation of body positions (window-open's and window-close's window slide,
    faucet-open's handle, make-coffee's machine button), so the package's reset observation shows those objects up to 20 cm
    from where the first step finds them. ``mj_forward`` computes positions without advancing time; the steps that
    follow are unchanged."""
    sim.reset()
    mujoco.mj_forward(sim.model, sim.data)
    sim._prev_obs = sim._get_curr_obs_combined_no_goal()  # no stale previous frame in the observation either
    return sim._get_obs()


def read_entities(sim: SawyerXYZEnv, task: Task, current: np.ndarray) -> dict[str, np.ndarray]:
    """The 7-number row of every entity ``task`` uses, from the package observation's current
    18 numbers (``current``) and, for what it leaves out, the simulator."""
    extra, read_extra, _ = COMPOSITE_STAGE_TWO.get(task.name, (None, None, None))
    observed = [entity for entity in task.entities if entity not in ("wall", extra)]
    rows = {
        name: entity_row(current[part][:3], current[part][3:]) for name, part in zip(observed, PACKAGE_OBJECT_SLOTS)
    }
    if read_extra is not None:
        rows[extra] = read_extra(sim)
    if "wall" in task.entities:  # the package leaves the wall out of its observation; the original added it
        rows["wall"] = entity_row(sim.data.body("wall").xpos, sim.data.body("wall").xquat)
    return rows


def stage_targets(sim: SawyerXYZEnv, task: Task) -> list[np.ndarray]:
    """The target location of each stage, fixed at reset: the package goal, then the composite's next one."""
    first = np.array(sim._target_pos, dtype=np.float64)
    if task.name in COMPOSITE_STAGE_TWO:
        return [first, COMPOSITE_STAGE_TWO[task.name][2](sim)]
    return [first]
