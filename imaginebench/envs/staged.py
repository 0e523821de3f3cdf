"""Tasks made of stages that complete in order (Meta-World's composite tasks, LIBERO's multi-object tasks):
one stage tracker for the env's step and for judging a generated sequence, shared by every staged domain."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np


class Stage(Protocol):
    def reached(self, state: np.ndarray, start: np.ndarray) -> bool:
        """Whether ``state`` completes this stage; ``start`` is the episode's first state (LIBERO measures
        some goals as movement from it)."""
        ...


def advance_stage(stages: Sequence[Stage], stage: int, state: np.ndarray, start: np.ndarray) -> int:
    """The stage index after observing ``state`` (``len(stages)`` once the task is solved). At most one stage
    completes per state: the state that completes a stage still shows that stage's goal."""
    if stage < len(stages) and stages[stage].reached(state, start):
        return stage + 1
    return stage


def staged_success_flags(stages: Sequence[Stage], states: np.ndarray) -> np.ndarray:
    """Whether the task is solved at each state of a sequence that begins with the episode's first state."""
    states = np.asarray(states, dtype=np.float64)
    stage, flags = 0, []
    for state in states:
        stage = advance_stage(stages, stage, state, states[0])
        flags.append(stage == len(stages))
    return np.array(flags, dtype=bool)
