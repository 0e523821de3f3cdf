"""Experts: the package's scripted policies (``metaworld.policies``), one per stage.

Each package policy reads the package's 39-number observation; the expert rebuilds it from our
91-number state (hand, gripper, the stage's entities as the package's objects, the stage's target
as the goal), so the same code drives single tasks and the stages of composite ones.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from metaworld.policies import ENV_POLICY_MAP

from imaginebench.envs.metaworld.composite import DoorPullPolicy
from imaginebench.envs.metaworld.layout import GRIPPER_OPENING, TARGET, entity_slice
from imaginebench.envs.metaworld.tasks import Stage

if TYPE_CHECKING:
    from imaginebench.envs.metaworld.env import MetaWorldEnv


POLICIES: dict[str, type] = {**ENV_POLICY_MAP, "door-pull": DoorPullPolicy}
"""Stage experts by name: the package's scripted policies and our one stage script."""


def package_observation(state: np.ndarray, stage: Stage) -> np.ndarray:
    """The package's observation layout for ``stage``: current 18 numbers, a zero previous frame
    (the package policies ignore it), the goal."""
    current = np.zeros(18)
    current[: GRIPPER_OPENING + 1] = state[: GRIPPER_OPENING + 1]
    for k, entity in enumerate(stage.entities):
        current[4 + 7 * k : 11 + 7 * k] = state[entity_slice(entity)]
    return np.concatenate([current, np.zeros(18), state[TARGET]])


class MetaWorldExpert:
    """``expert(env) -> action`` (float32, clipped to [-1, 1]) for any Meta-World task."""

    def __init__(self) -> None:
        self._policies: dict[str, object] = {}

    def __call__(self, env: MetaWorldEnv) -> np.ndarray:
        task = env.spec_task
        assert task is not None, "MetaWorld-v0: call reset() before asking the expert"
        stage = task.stages[min(env.stage, len(task.stages) - 1)]
        if stage.policy not in self._policies:
            self._policies[stage.policy] = POLICIES[stage.policy]()
        action = self._policies[stage.policy].get_action(package_observation(env.state(), stage))
        return np.clip(action, -1.0, 1.0).astype(np.float32)
