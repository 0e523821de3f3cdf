"""The shipped files: found from the package, and the imaginary rollouts say which shipped model made them."""

from __future__ import annotations

import hashlib

import pytest

from imaginebench.assets import ASSETS_DIR
from imaginebench.datasets import load_episodes


def test_assets_sit_at_the_repository_root():
    assert ASSETS_DIR.is_absolute() and (ASSETS_DIR.parent / "pyproject.toml").is_file()


@pytest.mark.parametrize("level", ["rephrase", "easy", "hard"])
def test_shipped_imaginary_rollouts_name_the_shipped_grounded_model(level):
    metadata = load_episodes(ASSETS_DIR / "BabyAI-v0" / f"imaginary-{level}").metadata
    checkpoint = ASSETS_DIR / "BabyAI-v0" / "grounding.ckpt"
    assert (metadata["env_id"], metadata["level"], metadata["source"]) == ("BabyAI-v0", level, "imaginary")
    assert metadata["generator"]["kind"] == "grounded-lm"
    assert metadata["generator"]["checkpoint_sha256"] == hashlib.sha256(checkpoint.read_bytes()).hexdigest()
