"""Experts: the package's scripted policies (``metaworld.policies``) and two of ours, one per stage.

Each policy reads the package's 39-number observation; the expert rebuilds it from our
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


class SoccerPushPolicy:
    """soccer: push the ball at the goal with the closed fingers, re-aiming it at every step.

    The package's ``SawyerSoccerV3Policy`` solves 86-88 % of episodes (176 of seeds 0-199): it walks to
    its push point at ball height, so repositioning beside the ball knocks it sideways, and it chases it
    off the table (19 of those 24 failures), gets ahead of it and pushes it back (3) or leaves it against
    the goal frame beside a post (2). This script, written for imaginebench (198 of 200), never moves low
    beside the ball: it flies over it to a point behind it on the line to the goal, descends, and pushes
    along that line, steering sideways to keep the ball on it; it rises again if the ball slips off. The
    closed fingers are a box whose faces push the ball only along x or y, so a slanted push hits the ball
    with the box corner facing it, the one contact whose normal can point anywhere. Reads hand
    (``obs[:3]``), ball (``obs[4:7]``) and goal (``obs[-3:]``) of the package's observation.
    """

    BALL_RADIUS = 0.026
    CORNER_X = (-0.0195, 0.0135)
    """Left and right edge of the closed fingers relative to the hand, as the ball meets them
    (contact positions, then tuned: the fingers tilt as the hand moves)."""
    CORNER_Y = (-0.0155, 0.0215)
    """Back and front face of the closed fingers relative to the hand."""
    PUSH_Z = 0.055
    """Hand height that puts the fingertips just above the table (they reach 4.5 cm below the hand)."""
    CLEAR_Z = 0.12
    APPROACH = 0.06
    """Where the push starts: the finger corner this far behind the ball's centre."""
    ALIGN, KEEP = 0.003, 0.012
    """Largest sideways offset of the corner from the push line to start a push, and to go on with one."""
    SPEED, STEER = 0.6, 100.0
    AIM_SHORT = 0.03
    """Aim this far in front of the goal's target, so the ball enters the mouth, not along a post."""

    def get_action(self, obs: np.ndarray) -> np.ndarray:
        hand, ball = obs[:3], obs[4:6]
        aim = obs[-3:-1] - np.array([0.0, self.AIM_SHORT])
        forward = (aim - ball) / max(float(np.linalg.norm(aim - ball)), 1e-6)
        side = np.array([-forward[1], forward[0]])
        corner = np.array(
            [
                0.0 if abs(forward[0]) < 0.1 else self.CORNER_X[int(forward[0] > 0)],
                self.CORNER_Y[int(forward[1] > 0)],
            ]
        )
        along, across = (hand[:2] + corner - ball) @ forward, (hand[:2] + corner - ball) @ side
        start = ball - self.APPROACH * forward - corner
        if hand[2] < self.CLEAR_Z - 0.02:
            clear = along < -self.BALL_RADIUS - 0.004  # no part of the fingers can touch the ball
            if along < 0 and abs(across) < (self.ALIGN if clear else self.KEEP) and hand[2] < self.PUSH_Z + 0.015:
                push = self.SPEED * forward - self.STEER * across * side
                return np.append(np.clip(np.append(push, 25.0 * (self.PUSH_Z - hand[2])), -1.0, 1.0), 1.0)
            if clear:  # behind the ball: slide onto the push line
                return self._move(hand, ball + min(along, -self.BALL_RADIUS - 0.008) * forward - corner, self.PUSH_Z)
            return self._move(hand, hand[:2], self.CLEAR_Z)  # beside or ahead of the ball: rise in place
        if np.linalg.norm(hand[:2] - start) < 0.015:
            return self._move(hand, start, self.PUSH_Z)
        return self._move(hand, start, self.CLEAR_Z)

    @staticmethod
    def _move(hand: np.ndarray, xy: np.ndarray, z: float) -> np.ndarray:
        """Toward (xy, z) in a straight line, at most one action unit along any axis; fingers closed."""
        step = 25.0 * (np.append(xy, z) - hand)
        return np.append(step / max(1.0, float(np.abs(step).max())), 1.0)


POLICIES: dict[str, type] = {**ENV_POLICY_MAP, "door-pull": DoorPullPolicy, "soccer-push": SoccerPushPolicy}
"""Stage experts by name: the package's scripted policies and our two stage scripts."""


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
