"""Fixed evaluation episodes (start layout, goal, instruction) per level and task, stored in the package.

The original drew test episodes from files that are lost (docs/original-benchmark.md#clevr-robot); ours are generated
deterministically from :data:`SEED` and committed as ``evaluation_sets.json`` so every run
evaluates the same episodes, the same number per task. Regenerate (after changing tasks or
phrasings) with ``python -m imaginebench.envs.clevr.evaluation_set``; a test checks the file
matches what the generator produces.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import numpy as np

from imaginebench.envs.clevr.phrasings import instruction
from imaginebench.envs.clevr.tasks import LEVEL_TASKS, sample_start
from imaginebench.levels import LEVELS
from imaginebench.storage import atomic_write_text

SEED = 20_250_521
EPISODES_PER_TASK = 30
FIXTURE = Path(__file__).with_name("evaluation_sets.json")
_DECIMALS = 4
"""Positions are stored rounded (well below the 0.02 state tolerance), which keeps the file small."""


def generate(seed: int = SEED, episodes_per_task: int = EPISODES_PER_TASK) -> dict:
    """level → task → list of ``{"positions", "goal", "instruction"}``; each (level, task) has its own stream."""
    sets: dict = {"seed": seed, "episodes_per_task": episodes_per_task, "levels": {}}
    for level_index, level in enumerate(LEVELS):
        sets["levels"][level] = {}
        for task_index, task in enumerate(LEVEL_TASKS[level]):
            rng = np.random.default_rng([seed, level_index, task_index])
            entries = []
            for _ in range(episodes_per_task):
                positions, goal = sample_start(task, rng)
                entries.append(
                    {
                        "positions": np.round(positions, _DECIMALS).tolist(),
                        "goal": goal.to_json(),
                        "instruction": instruction(level, goal, rng),
                    }
                )
            sets["levels"][level][task] = entries
    return sets


@cache
def stored() -> dict:
    try:
        return json.loads(FIXTURE.read_text())
    except FileNotFoundError:
        raise FileNotFoundError(
            f"Ball-v0: evaluation set {FIXTURE} is missing; run python -m imaginebench.envs.clevr.evaluation_set"
        ) from None


def evaluation_starts(level: str, task: str) -> list[dict]:
    """Reset options of the stored episodes of one task (``env.reset(options=...)`` starts from each)."""
    return [{"start": entry} for entry in stored()["levels"][level][task]]


if __name__ == "__main__":
    atomic_write_text(json.dumps(generate(), separators=(",", ":")), FIXTURE)
    print(f"wrote {FIXTURE} ({FIXTURE.stat().st_size} bytes)")
