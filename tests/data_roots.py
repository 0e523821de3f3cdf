"""An empty data root holding only a few real BabyAI episodes, so ``get_dataset`` never auto-collects 20,000."""

from __future__ import annotations

from pathlib import Path

import pytest

from imaginebench.collect import collect
from imaginebench.datasets.locations import default_dataset_dir
from imaginebench.processes import available_cores

REAL_EPISODES = 4


def first_use_collection_options() -> dict:
    """The options ``collect_default`` passes to ``collect`` besides the env, level, count and place: what
    tests that intercept first-use collection expect."""
    return {
        "seed": 0,
        "encoder": "all-MiniLM-L6-v2",
        "pooling": "mean",
        "progress": True,
        "wait": True,
        "workers": available_cores(),
    }


@pytest.fixture
def babyai_data_root(tmp_path, monkeypatch) -> Path:
    """``$IMAGINEBENCH_DATA`` pointed at a fresh directory with ``REAL_EPISODES`` real train episodes."""
    root = tmp_path / "data"
    monkeypatch.setenv("IMAGINEBENCH_DATA", str(root))
    collect("BabyAI-v0", "train", REAL_EPISODES, default_dataset_dir("BabyAI-v0", "real", "train"), progress=False)
    return root
