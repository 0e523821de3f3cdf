"""A tiny shipped grounded model in a temporary ``assets/``, so first-use imagination takes seconds, not hours."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from imaginebench.commands.pipeline import export_grounded_model

TINY_SETTINGS = {"rollouts": 3, "seed": 0, "temperature": 0.0}
"""``imagination.json`` of the tiny shipped model: few rollouts, greedy."""


@pytest.fixture(scope="session")
def tiny_assets(tmp_path_factory, grounded_checkpoint) -> Path:
    """An ``assets/`` holding only ``BabyAI-v0/grounding.ckpt`` (the tiny model, exported as shipped) and its settings."""
    root = tmp_path_factory.mktemp("assets")
    export_grounded_model(Path(grounded_checkpoint), root / "BabyAI-v0" / "grounding.ckpt")
    (root / "BabyAI-v0" / "imagination.json").write_text(json.dumps(TINY_SETTINGS))
    return root


@pytest.fixture
def shipped_tiny_model(tiny_assets, monkeypatch) -> Path:
    """``ASSETS_DIR`` pointed at :func:`tiny_assets` for one test; never the real 135M-parameter model."""
    monkeypatch.setattr("imaginebench.assets.ASSETS_DIR", tiny_assets)
    return tiny_assets


@pytest.fixture
def no_shipped_assets(tmp_path, monkeypatch) -> Path:
    """``ASSETS_DIR`` pointed at an empty directory: nothing shipped, nothing to imagine from."""
    empty = tmp_path / "no-assets"
    empty.mkdir()
    monkeypatch.setattr("imaginebench.assets.ASSETS_DIR", empty)
    return empty
