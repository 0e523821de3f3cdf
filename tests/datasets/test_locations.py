"""Where the imaginary dataset of an env and level is found: the data root first, then the shipped assets."""

from __future__ import annotations

import pytest

from imaginebench.assets import ASSETS_DIR
from imaginebench.datasets.locations import find_imaginary_dataset, imaginary_dataset_dir


@pytest.fixture
def empty_root(tmp_path, monkeypatch):
    monkeypatch.setenv("IMAGINEBENCH_DATA", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)  # the shipped data are found from the package, not the working directory
    return tmp_path / "data"


@pytest.mark.parametrize("level", ["rephrase", "easy", "hard"])
def test_the_shipped_data_stand_in_when_the_data_root_has_none(empty_root, level):
    assert imaginary_dataset_dir("BabyAI-v0", level) == ASSETS_DIR / "BabyAI-v0" / f"imaginary-{level}"


def test_the_data_root_wins_and_an_explicit_root_is_looked_at_first(empty_root, tmp_path):
    (empty_root / "BabyAI-v0" / "imaginary-easy").mkdir(parents=True)
    assert find_imaginary_dataset("BabyAI-v0", "easy") == empty_root / "BabyAI-v0" / "imaginary-easy"
    assert find_imaginary_dataset("BabyAI-v0", "hard") == ASSETS_DIR / "BabyAI-v0" / "imaginary-hard"
    (tmp_path / "mine" / "BabyAI-v0" / "imaginary-hard").mkdir(parents=True)
    assert find_imaginary_dataset("BabyAI-v0", "hard", tmp_path / "mine") == tmp_path / "mine" / "BabyAI-v0" / "imaginary-hard"


def test_no_data_anywhere_names_both_places_and_the_command(empty_root):
    assert find_imaginary_dataset("Ball-v0", "easy") is None
    with pytest.raises(FileNotFoundError, match=rf"{empty_root / 'Ball-v0' / 'imaginary-easy'} or {ASSETS_DIR / 'Ball-v0' / 'imaginary-easy'}.*imaginebench imagine"):
        imaginary_dataset_dir("Ball-v0", "easy")
