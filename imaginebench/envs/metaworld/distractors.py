"""Distractor entities: one entity the task does not use, shown at a plausible state of its own.

The original drew a new random row for the distractor at every step (quirk 17 of docs/original-benchmark.md), which makes
input dimensions flicker; here the entity and its 7 numbers are drawn once per episode from a bank
of that entity's reset states in its own task's scene (a pool of seeded resets, built once per
process and only for the entities actually drawn).
"""

from __future__ import annotations

from functools import cache

import numpy as np

from imaginebench.envs.metaworld.layout import ENTITIES
from imaginebench.envs.metaworld.tasks import TASKS

BANK_SIZE = 32
"""Reset states per entity; enough variety for a nuisance input, cheap to build (~0.5 s each)."""

SOURCE_TASK: dict[str, str] = {
    entity: next(t.name for t in TASKS.values() if entity in t.entities) for entity in ENTITIES
}
"""The task whose scene provides each entity's reset states (the first task that uses it)."""


@cache
def distractor_bank(entity: str) -> np.ndarray:
    """``(BANK_SIZE, 7)`` reset states of ``entity`` (deterministic: seeds 0..BANK_SIZE-1)."""
    from imaginebench.envs.metaworld.simulator import build_sim, read_entities

    task = TASKS[SOURCE_TASK[entity]]
    sim = build_sim(task)
    rows = []
    for seed in range(BANK_SIZE):
        sim.seed(seed)
        observation, _ = sim.reset()
        rows.append(read_entities(sim, task, observation[:18])[entity])
    sim.close()
    return np.stack(rows)


def draw_distractor(used: tuple[str, ...], rng: np.random.Generator) -> tuple[str, np.ndarray]:
    """An entity not in ``used`` and one of its bank states."""
    candidates = [entity for entity in ENTITIES if entity not in used]
    entity = candidates[int(rng.integers(len(candidates)))]
    bank = distractor_bank(entity)
    return entity, bank[int(rng.integers(len(bank)))].copy()
