"""The shipped files: found from the package, and every shipped grounded model says how its data are imagined."""

from __future__ import annotations

import pytest

from imaginebench.assets import ASSETS_DIR
from imaginebench.shipped import CHECKPOINT_FILE, SETTINGS_FILE, read_imagination_settings

SHIPPED_MODELS = sorted(path.parent for path in ASSETS_DIR.glob(f"*/{CHECKPOINT_FILE}"))


def test_assets_sit_at_the_repository_root():
    assert ASSETS_DIR.is_absolute() and (ASSETS_DIR.parent / "pyproject.toml").is_file()


@pytest.mark.parametrize("env_id", ["BabyAI-v0", "Ball-v0", "MetaWorld-v0", "Mujoco-v0", "Libero-v0"])
def test_the_grounded_domains_ship_a_small_model_and_no_data(env_id):
    """Git carries the trained weights only (the frozen backbone is rebuilt); the data are imagined on first use."""
    checkpoint = ASSETS_DIR / env_id / CHECKPOINT_FILE
    assert ASSETS_DIR / env_id in SHIPPED_MODELS, f"no {checkpoint}"
    assert checkpoint.stat().st_size < 8 * 2**20, f"{checkpoint}: {checkpoint.stat().st_size} bytes"
    assert not list((ASSETS_DIR / env_id).glob("imaginary-*"))


@pytest.mark.parametrize("env_dir", SHIPPED_MODELS, ids=lambda path: path.name)
def test_every_shipped_grounded_model_has_valid_imagination_settings(env_dir):
    read_imagination_settings(env_dir / SETTINGS_FILE)  # the checkpoint itself is not loaded: too slow for a test
