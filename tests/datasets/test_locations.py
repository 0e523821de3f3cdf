"""Where the imaginary dataset of an env and level is found: the data root first, then the shipped assets."""

from __future__ import annotations

import pytest

from imaginebench.datasets.locations import find_imaginary_dataset


@pytest.fixture
def empty_root(tmp_path, monkeypatch):
    monkeypatch.setenv("IMAGINEBENCH_DATA", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)  # the shipped data are found from the package, not the working directory
    return tmp_path / "data"


@pytest.fixture
def assets_with_rollouts(tmp_path, monkeypatch):
    """An ``assets/`` shipping (empty stand-ins for) BabyAI's imaginary rollouts of every novel level."""
    assets = tmp_path / "assets"
    for level in ("rephrase", "easy", "hard"):
        (assets / "BabyAI-v0" / f"imaginary-{level}").mkdir(parents=True)
    monkeypatch.setattr("imaginebench.assets.ASSETS_DIR", assets)
    return assets


@pytest.mark.parametrize("level", ["rephrase", "easy", "hard"])
def test_the_shipped_data_stand_in_when_the_data_root_has_none(empty_root, assets_with_rollouts, level):
    assert find_imaginary_dataset("BabyAI-v0", level) == assets_with_rollouts / "BabyAI-v0" / f"imaginary-{level}"


def test_the_data_root_wins_and_an_explicit_root_is_looked_at_first(empty_root, assets_with_rollouts, tmp_path):
    (empty_root / "BabyAI-v0" / "imaginary-easy").mkdir(parents=True)
    assert find_imaginary_dataset("BabyAI-v0", "easy") == empty_root / "BabyAI-v0" / "imaginary-easy"
    assert find_imaginary_dataset("BabyAI-v0", "hard") == assets_with_rollouts / "BabyAI-v0" / "imaginary-hard"
    (tmp_path / "mine" / "BabyAI-v0" / "imaginary-hard").mkdir(parents=True)
    assert (
        find_imaginary_dataset("BabyAI-v0", "hard", tmp_path / "mine")
        == tmp_path / "mine" / "BabyAI-v0" / "imaginary-hard"
    )


def test_no_data_in_either_place_is_none(empty_root, assets_with_rollouts):
    assert (
        find_imaginary_dataset("Ball-v0", "easy") is None
    )  # imagining it is imaginebench.shipped's job (tests/test_shipped.py)
