"""gymnasium: a MuJoCo env compiles its scene once per process, not once per env."""

from __future__ import annotations

import copy
from functools import cache

import mujoco

_compiled: dict[tuple, mujoco.MjModel] = {}
"""(env class, scene file, offscreen width, height) → the model its first env compiled, never handed out."""


class CompiledSceneOncePerProcess:
    """Mixin for a gymnasium 1.4 ``MujocoEnv`` subclass: ``_initialize_simulation`` parses and compiles
    the scene for every env (~90 ms for a Meta-World scene, most of an evaluation's reset time with
    hundreds of envs). Here the class's own ``_initialize_simulation`` runs once per process and
    scene, and every env gets a copy of that model (~8 ms). ``MjModel``'s copy duplicates every field,
    so each env still owns the model it may change. Pinned by ``tests/test_upstream.py``."""

    fullpath: str
    width: int
    height: int

    def _initialize_simulation(self) -> tuple[mujoco.MjModel, mujoco.MjData]:
        key = (type(self), self.fullpath, self.width, self.height)
        if key not in _compiled:
            _compiled[key] = super()._initialize_simulation()[0]  # type: ignore[misc]
        model = copy.copy(_compiled[key])
        return model, mujoco.MjData(model)


@cache
def compiling_scene_once(env_class: type) -> type:
    """``env_class`` with :class:`CompiledSceneOncePerProcess` mixed in (one subclass per class)."""
    return type(env_class.__name__, (CompiledSceneOncePerProcess, env_class), {"__module__": env_class.__module__})
