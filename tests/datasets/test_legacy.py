"""``env.get_dataset``: real data collected on first use, imaginary data from the data root or imagined there from the shipped model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import imaginebench
import imaginebench.collect as collect_module
from imaginebench.datasets import DatasetError, EpisodeDataset, load_episodes, write_episodes
from imaginebench.datasets.legacy import to_padded_arrays
from imaginebench.datasets.locations import default_dataset_dir
from tests.data_roots import REAL_EPISODES, first_use_collection_options
from tests.shipped_fixtures import TINY_SETTINGS


def write_imaginary(root: Path, level: str, episodes: int, metadata: dict | None = None) -> Path:
    """Expert episodes of ``level`` relabelled as imaginary (``metadata`` overrides fields) at the data root's default place."""
    oracle = load_episodes(collect_module.collect("BabyAI-v0", level, episodes, root / "oracle", progress=False))
    relabelled = {**oracle.metadata, "source": "imaginary", **(metadata or {})}
    return write_episodes(
        EpisodeDataset(oracle.steps, oracle.instruction_texts, oracle.instruction_embeddings, relabelled),
        root / "BabyAI-v0" / f"imaginary-{level}",
    )


@pytest.mark.parametrize("level", ["rephrase", "easy", "hard"])
def test_an_empty_data_root_gets_imaginary_data_of_each_novel_level_imagined_from_the_shipped_model(
    babyai_data_root, shipped_tiny_model, level
):
    real, imaginary = imaginebench.make("BabyAI-v0", level=level).get_dataset()
    imagined = load_episodes(default_dataset_dir("BabyAI-v0", "imaginary", level))
    assert (
        imagined.num_episodes == TINY_SETTINGS["rollouts"] and imagined.metadata["generator"]["kind"] == "grounded-lm"
    )
    expected = to_padded_arrays(imagined)
    num_episodes, horizon, width = real["observations"].shape
    assert num_episodes == REAL_EPISODES and width == 17 + 384
    assert real["actions"].shape == (REAL_EPISODES, horizon) and real["actions"].dtype == np.int64
    assert real["rewards"].shape == real["masks"].shape == (REAL_EPISODES, horizon, 1)
    assert imaginary is not None and imaginary.keys() == expected.keys()
    for key in expected:
        np.testing.assert_array_equal(imaginary[key], expected[key], err_msg=key)


def test_the_train_level_has_no_imaginary_data(babyai_data_root, shipped_tiny_model):
    assert imaginebench.make("BabyAI-v0", level="train").get_dataset()[1] is None
    assert not (babyai_data_root / "BabyAI-v0" / "imaginary-train").exists()


def test_without_data_or_a_shipped_model_a_novel_level_has_none_and_a_line_naming_the_pipeline(
    babyai_data_root, no_shipped_assets, capsys
):
    """As for the envs whose grounding configs are unmeasured (Meta-World, HalfCheetah, LIBERO): nothing to imagine from."""
    real, imaginary = imaginebench.make("BabyAI-v0", level="easy").get_dataset()
    assert imaginary is None and real["observations"].shape[0] == REAL_EPISODES
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("get_dataset:")]
    assert len(lines) == 1 and "no imaginary data of BabyAI-v0 level 'easy'" in lines[0]
    assert "`imaginebench pipeline --env BabyAI-v0` grounds one" in lines[0]
    assert not (babyai_data_root / "BabyAI-v0" / "imaginary-easy").exists()


def test_imaginary_data_under_the_data_root_win_over_the_shipped_model(babyai_data_root, shipped_tiny_model):
    write_imaginary(babyai_data_root, "easy", 4)
    _, imaginary = imaginebench.make("BabyAI-v0", level="easy").get_dataset()
    assert imaginary["observations"].shape[0] == 4 != TINY_SETTINGS["rollouts"]
    _, hard = imaginebench.make("BabyAI-v0", level="easy").get_dataset(level="hard")  # no own hard data: imagined
    assert hard["observations"].shape[0] == TINY_SETTINGS["rollouts"]


@pytest.mark.parametrize(
    "metadata, field",
    [
        ({"env_id": "Ball-v0"}, "env_id"),
        ({"encoder_id": "bert-base-uncased:pooler"}, "encoder_id"),
        ({"level": "hard"}, "level"),
        ({"source": "real"}, "source"),
        ({"reward_version": 2}, "reward_version"),  # rewarded under a reward BabyAI does not pay
        ({"states_version": 2}, "states_version"),  # states BabyAI does not produce
    ],
)
def test_imaginary_data_made_for_something_else_is_refused_naming_file_and_field(babyai_data_root, metadata, field):
    path = write_imaginary(babyai_data_root, "easy", 2, metadata)
    with pytest.raises(DatasetError, match=rf"{path / 'metadata.json'}: field '{field}' is"):
        imaginebench.make("BabyAI-v0", level="easy").get_dataset()


def test_real_data_of_another_encoder_is_refused(babyai_data_root):
    real_dir = default_dataset_dir("BabyAI-v0", "real", "train")
    real = load_episodes(real_dir)
    write_episodes(
        EpisodeDataset(
            real.steps,
            real.instruction_texts,
            real.instruction_embeddings,
            {**real.metadata, "encoder_id": "other:cls"},
        ),
        real_dir,
        overwrite=True,
    )
    with pytest.raises(DatasetError, match=rf"{real_dir / 'metadata.json'}: field 'encoder_id' is 'other:cls'"):
        imaginebench.make("BabyAI-v0", level="easy").get_dataset()


@pytest.fixture
def collect_calls(monkeypatch) -> list[dict]:
    """Records every ``collect`` call, then collects only ``REAL_EPISODES`` episodes of what was asked."""
    calls, real_collect = [], collect_module.collect

    def record(env_id, level, episodes, out, **kwargs):
        calls.append({"env_id": env_id, "level": level, "episodes": episodes, "out": out, **kwargs})
        return real_collect(env_id, level, REAL_EPISODES, out, **{**kwargs, "progress": False})

    monkeypatch.setattr(collect_module, "collect", record)
    return calls


def test_missing_default_real_data_is_collected_there_once(tmp_path, monkeypatch, collect_calls, shipped_tiny_model):
    monkeypatch.setenv("IMAGINEBENCH_DATA", str(tmp_path / "data"))
    env = imaginebench.make("BabyAI-v0", level="easy")
    real, imaginary = env.get_dataset()
    default = tmp_path / "data" / "BabyAI-v0" / "real-train"
    assert collect_calls == [
        {
            "env_id": "BabyAI-v0",
            "level": "train",
            "episodes": 20000,
            "out": default,
            **first_use_collection_options(),
        }
    ]
    assert real["observations"].shape[0] == REAL_EPISODES and imaginary is not None
    env.get_dataset()
    assert len(collect_calls) == 1


def test_missing_real_data_elsewhere_is_an_error_naming_it(tmp_path, monkeypatch, collect_calls):
    monkeypatch.setenv("IMAGINEBENCH_DATA", str(tmp_path / "data"))
    elsewhere = tmp_path / "elsewhere"
    with pytest.raises(
        FileNotFoundError,
        match=rf"{elsewhere / 'BabyAI-v0' / 'real-train'}: no real data.*imaginebench collect --env BabyAI-v0",
    ):
        imaginebench.make("BabyAI-v0", level="easy").get_dataset(data_dir=str(elsewhere))
    assert collect_calls == [] and not elsewhere.exists()
