"""Meta-World tasks per level: which package env and expert each uses, which entity slots it fills,
its horizon, and its success check as stages of pure functions of the 91-number state.

Checks restate the package's own success criteria (metaworld 3.1.1 ``evaluate_state``) on the
layout, so generated states can be judged without a simulator. ``target`` is the state's target
location, the current stage's goal; composite tasks switch it when a stage completes (docs/original-benchmark.md#meta-world).
The composite tasks' stages check the right objects (quirks 5-6 of docs/original-benchmark.md): make-coffee's second stage
reads the coffee-machine button, not the mug; locked-door-open's first stage reads the lock.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from imaginebench.envs.metaworld.layout import GRIPPER, TARGET, entity_position

Check = Callable[[np.ndarray], bool]

HORIZON = 100
"""Steps per episode, as in the original; tasks whose expert needs longer get their own (below)."""
TCP_OFFSET = np.array([0.0, 0.0, -0.045])
"""Tool centre point (between the finger pads) relative to the hand position the state records;
the package judges reaching by the tool centre point. The hand keeps its orientation, so this is constant
(measured: -0.045 ± 0.0003 in z)."""


def _near(entity: str, radius: float) -> Check:
    """Entity within ``radius`` of the target (Euclidean)."""
    return lambda s: bool(np.linalg.norm(entity_position(s, entity) - s[TARGET]) <= radius)


def _near_axis(entity: str, axis: int, radius: float, also_z: float | None = None) -> Check:
    """Entity within ``radius`` of the target along one axis (buttons, locks, doors); ``also_z``
    additionally requires the target to be at the entity's height (so a stage-2 check cannot pass
    against the previous stage's target)."""

    def check(s: np.ndarray) -> bool:
        position, target = entity_position(s, entity), s[TARGET]
        if also_z is not None and abs(position[2] - target[2]) > also_z:
            return False
        return bool(abs(position[axis] - target[axis]) <= radius)

    return check


def _tcp_near(radius: float) -> Check:
    return lambda s: bool(np.linalg.norm(s[GRIPPER] + TCP_OFFSET - s[TARGET]) <= radius)


def _nail_driven(s: np.ndarray) -> bool:
    """hammer: the package requires the nail's slide joint > 0.09; the nail starts 0.10 in front of
    the goal site along y, so that is nail y >= goal y - 0.01."""
    return bool(entity_position(s, "nail")[1] >= s[TARGET][1] - 0.01)


@dataclass(frozen=True)
class Stage:
    """One stage of a task: the expert that solves it (a ``metaworld.policies`` name, or one of
    ours, see ``expert.POLICIES``), the entity slots that expert sees as its objects (in the
    package's observation order), and the check that ends the stage."""

    policy: str
    entities: tuple[str, ...]
    check: Check

    def reached(self, state: np.ndarray, start: np.ndarray) -> bool:
        return self.check(state)


@dataclass(frozen=True)
class Task:
    """``source``: the package env (``metaworld.env_dict`` name) the task runs in; ``entities``: the
    slots its observation fills, the package's objects in order (plus the wall for wall tasks)."""

    name: str
    source: str
    entities: tuple[str, ...]
    stages: tuple[Stage, ...]
    horizon: int = HORIZON


def _single(name: str, entities: tuple[str, ...], check: Check, horizon: int = HORIZON, policy: str = "") -> Task:
    """A package task with the package's expert (or ``policy``, one of ours); the first entity is what
    the expert manipulates."""
    source = f"{name}-v3"
    return Task(name, source, entities, (Stage(policy or source, entities[:1], check),), horizon)


_COFFEE_BUTTON = _near_axis("coffee_button", 1, 0.02, also_z=0.05)
_UNLOCK = _near_axis("lock", 0, 0.02)

TASKS: dict[str, Task] = {
    task.name: task
    for task in (
        # train (and rephrase)
        _single("reach", ("target_object",), _tcp_near(0.05)),
        _single("push", ("target_object",), _near("target_object", 0.05)),
        _single("pick-place", ("target_object",), _near("target_object", 0.07)),
        _single("button-press", ("button",), _near_axis("button", 1, 0.02)),
        _single("door-unlock", ("lock",), _UNLOCK),
        _single("door-open", ("handle",), _near_axis("handle", 0, 0.08), horizon=150),
        _single("window-open", ("window",), _near_axis("window", 0, 0.05)),
        _single("faucet-open", ("faucet",), _near("faucet", 0.07)),
        _single("coffee-push", ("coffee",), _near("coffee", 0.07)),
        _single("coffee-button", ("coffee_button",), _COFFEE_BUTTON),
        # easy: wall variants and reverse skills
        _single("reach-wall", ("target_object", "wall"), _tcp_near(0.05)),
        _single("push-wall", ("target_object", "wall"), _near("target_object", 0.07)),
        _single("pick-place-wall", ("target_object", "wall"), _near("target_object", 0.07), horizon=150),
        _single("button-press-wall", ("button", "wall"), _near_axis("button", 1, 0.03)),
        _single("door-lock", ("lock",), _near_axis("lock", 2, 0.02), horizon=150),
        _single("door-close", ("handle",), _near("handle", 0.08)),
        _single("window-close", ("window",), _near_axis("window", 0, 0.05)),
        _single("faucet-close", ("faucet",), _near("faucet", 0.07)),
        # hard: two package tasks and two composites
        _single("hammer", ("hammer", "nail"), _nail_driven),
        _single("soccer", ("soccer",), _near("soccer", 0.07), horizon=150, policy="soccer-push"),
        Task(
            "make-coffee",
            "coffee-push-v3",
            ("coffee", "coffee_button"),
            (
                Stage("coffee-push-v3", ("coffee",), _near("coffee", 0.07)),
                Stage("coffee-button-v3", ("coffee_button",), _COFFEE_BUTTON),
            ),
            horizon=150,
        ),
        Task(
            "locked-door-open",
            "door-unlock-v3",
            ("lock", "handle"),
            (Stage("door-unlock-v3", ("lock",), _UNLOCK), Stage("door-pull", ("handle",), _near("handle", 0.04))),
            horizon=200,
        ),
    )
}

LEVEL_TASKS: dict[str, tuple[str, ...]] = {
    "train": (
        "reach",
        "push",
        "pick-place",
        "button-press",
        "door-unlock",
        "door-open",
        "window-open",
        "faucet-open",
        "coffee-push",
        "coffee-button",
    ),
    "easy": (
        "reach-wall",
        "push-wall",
        "pick-place-wall",
        "button-press-wall",
        "door-lock",
        "door-close",
        "window-close",
        "faucet-close",
    ),
    "hard": ("make-coffee", "locked-door-open", "hammer", "soccer"),
}
LEVEL_TASKS["rephrase"] = LEVEL_TASKS["train"]
