"""Distractor entities: one entity the task does not use, shown at a plausible state of its own.

The original drew a new random row for the distractor at every step (quirk 17 of docs/original-benchmark.md), which makes
input dimensions flicker; here the entity and its 7 numbers are drawn once per episode from a bank
of that entity's reset states in its own task's scene (a pool of seeded resets).

The banks are stored in ``distractor_banks.json`` (exact values), because building them costs every
process that makes envs ~2 s of simulated resets, paid again by each evaluation and collection
worker. Regenerate (after changing tasks or the package) with
``python -m imaginebench.envs.metaworld.distractors``; a test checks the file matches the generator.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import numpy as np

from imaginebench.envs.metaworld.layout import ENTITIES
from imaginebench.envs.metaworld.tasks import TASKS
from imaginebench.storage import atomic_write_text

BANK_SIZE = 32
"""Reset states per entity; enough variety for a nuisance input, stored, since building one costs ~0.2 s of simulated resets."""

SOURCE_TASK: dict[str, str] = {
    entity: next(t.name for t in TASKS.values() if entity in t.entities) for entity in ENTITIES
}
"""The task whose scene provides each entity's reset states (the first task that uses it)."""
BANKS_FILE = Path(__file__).with_name("distractor_banks.json")


def generate_bank(entity: str) -> np.ndarray:
    """``(BANK_SIZE, 7)`` reset states of ``entity`` (deterministic: seeds 0..BANK_SIZE-1)."""
    from imaginebench.envs.metaworld.simulator import build_sim, read_entities, reset_observation

    task = TASKS[SOURCE_TASK[entity]]
    sim = build_sim(task)
    rows = []
    for seed in range(BANK_SIZE):
        sim.seed(seed)
        observation = reset_observation(sim)
        rows.append(read_entities(sim, task, observation[:18])[entity])
    sim.close()
    return np.stack(rows)


@cache
def stored_banks() -> dict[str, np.ndarray]:
    try:
        banks = json.loads(BANKS_FILE.read_text())
    except FileNotFoundError:
        raise FileNotFoundError(
            f"MetaWorld-v0: {BANKS_FILE} is missing; run python -m imaginebench.envs.metaworld.distractors"
        ) from None
    return {entity: np.array(rows, dtype=np.float64) for entity, rows in banks.items()}


def draw_distractor(used: tuple[str, ...], rng: np.random.Generator) -> tuple[str, np.ndarray]:
    """An entity not in ``used`` and one of its bank states."""
    candidates = [entity for entity in ENTITIES if entity not in used]
    entity = candidates[int(rng.integers(len(candidates)))]
    bank = stored_banks()[entity]
    return entity, bank[int(rng.integers(len(bank)))].copy()


if __name__ == "__main__":
    atomic_write_text(json.dumps({entity: generate_bank(entity).tolist() for entity in ENTITIES}), BANKS_FILE)
    print(f"wrote {BANKS_FILE} ({BANKS_FILE.stat().st_size} bytes)")
