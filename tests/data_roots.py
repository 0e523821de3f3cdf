"""An empty data root holding only a few real BabyAI episodes, so ``get_dataset`` never auto-collects 20,000."""

from __future__ import annotations

from pathlib import Path

import pytest

from imaginebench.collect import collect
from imaginebench.datasets.locations import default_dataset_dir

REAL_EPISODES = 4


@pytest.fixture
def babyai_data_root(tmp_path, monkeypatch) -> Path:
    """``$IMAGINEBENCH_DATA`` pointed at a fresh directory with ``REAL_EPISODES`` real train episodes."""
    root = tmp_path / "data"
    monkeypatch.setenv("IMAGINEBENCH_DATA", str(root))
    collect("BabyAI-v0", "train", REAL_EPISODES, default_dataset_dir("BabyAI-v0", "real", "train"), progress=False)
    return root
