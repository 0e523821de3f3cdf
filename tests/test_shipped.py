"""First use of a level's imaginary data: imagined once, deterministically, from the env's shipped grounded model."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
import torch
import yaml

import imaginebench.commands.imagine as imagine_command
import imaginebench.envs.babyai as babyai
from imaginebench.commands.imagine import file_sha256, find_or_imagine
from imaginebench.commands.pipeline import rollouts_per_level
from imaginebench.datasets import load_episodes
from imaginebench.errors import UserInputError
from imaginebench.registry import env_ids, get_domain
from imaginebench.shipped import imaginary_dataset_dir, read_imagination_settings, shipped_checkpoint, shipped_model
from tests.shipped_fixtures import TINY_SETTINGS
from tests.synthetic_episodes import write_synthetic


def test_first_use_imagines_the_shipped_settings_into_the_data_root_and_says_so(shipped_tiny_model, tmp_path, capsys):
    checkpoint = shipped_tiny_model / "BabyAI-v0" / "grounding.ckpt"
    path = find_or_imagine("BabyAI-v0", "easy", tmp_path / "data")
    assert path == tmp_path / "data" / "BabyAI-v0" / "imaginary-easy"
    dataset = load_episodes(path)
    assert (dataset.source, dataset.metadata["level"], dataset.num_episodes) == (
        "imaginary",
        "easy",
        TINY_SETTINGS["rollouts"],
    )
    generator = dataset.metadata["generator"]
    assert generator["checkpoint_sha256"] == file_sha256(checkpoint) and generator["checkpoint"] == str(checkpoint)
    assert (generator["seed"], generator["temperature"]) == (TINY_SETTINGS["seed"], TINY_SETTINGS["temperature"])
    announcement = capsys.readouterr().out.splitlines()[0]
    assert str(path) in announcement and str(checkpoint) in announcement and "(once)" in announcement


def test_a_second_use_reads_what_the_first_imagined(shipped_tiny_model, tmp_path, monkeypatch):
    path = find_or_imagine("BabyAI-v0", "hard", tmp_path / "data")
    written = (path / "metadata.json").stat().st_mtime_ns
    monkeypatch.setattr(imagine_command, "imagine", lambda *args, **kwargs: pytest.fail("imagined again"))
    assert imaginary_dataset_dir("BabyAI-v0", "hard", tmp_path / "data") == path
    assert (path / "metadata.json").stat().st_mtime_ns == written


def test_two_checkouts_imagine_the_same_rows(shipped_tiny_model, tmp_path):
    first, second = (load_episodes(find_or_imagine("BabyAI-v0", "rephrase", tmp_path / root)) for root in ("a", "b"))
    assert first.steps.keys() == second.steps.keys()
    for key in first.steps.keys():
        assert torch.equal(first.steps[key], second.steps[key]), key
    assert first.instruction_texts == second.instruction_texts
    assert torch.equal(torch.as_tensor(first.instruction_embeddings), torch.as_tensor(second.instruction_embeddings))


def test_the_users_own_data_win_and_are_not_imagined_over(shipped_tiny_model, tmp_path, monkeypatch):
    own = tmp_path / "data" / "BabyAI-v0" / "imaginary-easy"
    write_synthetic(own, "imaginary", num_episodes=2)
    monkeypatch.setattr(
        imagine_command, "imagine", lambda *args, **kwargs: pytest.fail("imagined over the user's data")
    )
    assert find_or_imagine("BabyAI-v0", "easy", tmp_path / "data") == own


@pytest.fixture
def editable_assets(tiny_assets, tmp_path, monkeypatch) -> Path:
    """A copy of the tiny shipped model that a test may change as a new release would."""
    shipped = tmp_path / "assets"
    shutil.copytree(tiny_assets, shipped)
    monkeypatch.setattr("imaginebench.assets.ASSETS_DIR", shipped)
    return shipped


def test_data_of_an_earlier_shipped_model_are_set_aside_and_imagined_anew(
    editable_assets, tmp_path, monkeypatch, capsys
):
    shipped = editable_assets
    first = find_or_imagine("BabyAI-v0", "easy", tmp_path / "data")
    old_sha = load_episodes(first).metadata["generator"]["checkpoint_sha256"]
    settings = shipped / "BabyAI-v0" / "imagination.json"
    settings.write_text(json.dumps({**TINY_SETTINGS, "rollouts": TINY_SETTINGS["rollouts"] + 1}))  # a new release
    again = find_or_imagine("BabyAI-v0", "easy", tmp_path / "data")
    assert again == first and load_episodes(again).num_episodes == TINY_SETTINGS["rollouts"] + 1
    stale = first.with_name(f"imaginary-easy.stale-{old_sha[:8]}-r1")
    assert load_episodes(stale).num_episodes == TINY_SETTINGS["rollouts"]  # set aside, not lost
    assert f"moved to {stale}" in capsys.readouterr().out
    monkeypatch.setattr(imagine_command, "imagine", lambda *args, **kwargs: pytest.fail("imagined a third time"))
    assert find_or_imagine("BabyAI-v0", "easy", tmp_path / "data") == first  # current data are kept


def test_data_set_aside_twice_under_the_same_checkpoint_keep_both_copies(editable_assets, tmp_path):
    first = find_or_imagine("BabyAI-v0", "easy", tmp_path / "data")
    sha = load_episodes(first).metadata["generator"]["checkpoint_sha256"]
    settings = editable_assets / "BabyAI-v0" / "imagination.json"
    for extra in (1, 2):  # two releases change the settings, not the checkpoint
        settings.write_text(json.dumps({**TINY_SETTINGS, "rollouts": TINY_SETTINGS["rollouts"] + extra}))
        find_or_imagine("BabyAI-v0", "easy", tmp_path / "data")
    stale = first.with_name(f"imaginary-easy.stale-{sha[:8]}-r1")
    assert load_episodes(stale).num_episodes == TINY_SETTINGS["rollouts"]
    assert load_episodes(stale.with_name(stale.name + "-2")).num_episodes == TINY_SETTINGS["rollouts"] + 1
    assert load_episodes(first).num_episodes == TINY_SETTINGS["rollouts"] + 2


def test_rollouts_per_level_imagine_each_level_its_own_count_and_a_changed_count_renews_only_its_level(
    editable_assets, tmp_path
):
    settings = editable_assets / "BabyAI-v0" / "imagination.json"
    settings.write_text(json.dumps({**TINY_SETTINGS, "rollouts": {"rephrase": 2, "easy": 4, "hard": 2}}))
    assert shipped_model("BabyAI-v0").rollouts == {"rephrase": 2, "easy": 4, "hard": 2}
    easy, hard = (find_or_imagine("BabyAI-v0", level, tmp_path / "data") for level in ("easy", "hard"))
    assert (load_episodes(easy).num_episodes, load_episodes(hard).num_episodes) == (4, 2)
    settings.write_text(json.dumps({**TINY_SETTINGS, "rollouts": {"rephrase": 2, "easy": 5, "hard": 2}}))
    assert load_episodes(find_or_imagine("BabyAI-v0", "easy", tmp_path / "data")).num_episodes == 5
    assert find_or_imagine("BabyAI-v0", "hard", tmp_path / "data") == hard
    assert [path.name for path in sorted(easy.parent.glob("*.stale-*"))] == [
        f"imaginary-easy.stale-{file_sha256(editable_assets / 'BabyAI-v0' / 'grounding.ckpt')[:8]}-r1"
    ]


def test_the_pipeline_imagines_as_many_rollouts_per_level_as_the_shipped_data_hold_unless_told(
    editable_assets, tmp_path, monkeypatch
):
    per_level = {"rephrase": 2, "easy": 4, "hard": 1}
    (editable_assets / "BabyAI-v0" / "imagination.json").write_text(
        json.dumps({**TINY_SETTINGS, "rollouts": per_level})
    )
    assert rollouts_per_level("BabyAI-v0", None) == per_level
    assert rollouts_per_level("BabyAI-v0", 9) == dict.fromkeys(per_level, 9)
    monkeypatch.setattr("imaginebench.assets.ASSETS_DIR", tmp_path / "no-assets")
    assert rollouts_per_level("BabyAI-v0", None) == dict.fromkeys(per_level, 700)


def test_one_count_for_every_level_reads_as_that_count_per_level(tmp_path):
    path = tmp_path / "imagination.json"
    path.write_text(json.dumps(TINY_SETTINGS))
    assert read_imagination_settings(path)["rollouts"] == dict.fromkeys(("rephrase", "easy", "hard"), 3)


def test_data_the_shipped_model_imagined_with_next_states_from_the_dynamics_prompt_are_not_its_default(
    shipped_tiny_model, tmp_path
):
    out = tmp_path / "data" / "BabyAI-v0" / "imaginary-easy"
    checkpoint = shipped_tiny_model / "BabyAI-v0" / "grounding.ckpt"
    settings = {"seed": TINY_SETTINGS["seed"], "temperature": TINY_SETTINGS["temperature"], "progress": False}
    imagine_command.imagine(
        checkpoint, "BabyAI-v0", "easy", TINY_SETTINGS["rollouts"], out, next_states="dynamics", **settings
    )
    assert find_or_imagine("BabyAI-v0", "easy", tmp_path / "data") == out
    assert load_episodes(out).metadata["generator"]["next_states"] == "rollout"
    (stale,) = out.parent.glob("imaginary-easy.stale-*")
    assert load_episodes(stale).metadata["generator"]["next_states"] == "dynamics"  # set aside, not lost


def test_a_release_that_reads_next_states_from_the_dynamics_prompt_imagines_so_and_sets_aside_the_rollout_reads(
    editable_assets, tmp_path
):
    first = find_or_imagine("BabyAI-v0", "easy", tmp_path / "data")
    settings = editable_assets / "BabyAI-v0" / "imagination.json"
    settings.write_text(json.dumps({**TINY_SETTINGS, "next_states": "dynamics"}))
    assert shipped_model("BabyAI-v0").next_states == "dynamics"
    assert find_or_imagine("BabyAI-v0", "easy", tmp_path / "data") == first
    assert load_episodes(first).metadata["generator"]["next_states"] == "dynamics"
    (stale,) = first.parent.glob("imaginary-easy.stale-*")
    assert load_episodes(stale).metadata["generator"]["next_states"] == "rollout"


@pytest.mark.parametrize("version", ["reward_version", "states_version"])
def test_data_made_under_an_earlier_reward_or_states_are_set_aside_and_imagined_anew(
    shipped_tiny_model, tmp_path, monkeypatch, version
):
    first = find_or_imagine("BabyAI-v0", "easy", tmp_path / "data")
    assert load_episodes(first).metadata[version] == 1
    monkeypatch.setattr(babyai, "DOMAIN", replace(babyai.DOMAIN, **{version: 2}))  # a release changes the env
    again = find_or_imagine("BabyAI-v0", "easy", tmp_path / "data")
    assert again == first and load_episodes(again).metadata[version] == 2
    sha = load_episodes(again).metadata["generator"]["checkpoint_sha256"]
    assert load_episodes(first.with_name(f"imaginary-easy.stale-{sha[:8]}-r1")).metadata[version] == 1


def test_the_train_level_is_never_imagined(shipped_tiny_model, tmp_path):
    assert find_or_imagine("BabyAI-v0", "train", tmp_path / "data") is None
    with pytest.raises(UserInputError, match=r"level 'train'.*imagines only rephrase, easy, hard"):
        imaginary_dataset_dir("BabyAI-v0", "train", tmp_path / "data")
    assert not (tmp_path / "data").exists()


def test_without_a_shipped_model_there_is_nothing_and_the_error_says_how_to_make_it(no_shipped_assets, tmp_path):
    own, assets = tmp_path / "data" / "Ball-v0" / "imaginary-easy", no_shipped_assets / "Ball-v0" / "imaginary-easy"
    assert shipped_model("Ball-v0") is None
    assert find_or_imagine("Ball-v0", "easy", tmp_path / "data") is None
    message = rf"{own} or {assets} \(no shipped model at {no_shipped_assets / 'Ball-v0' / 'grounding.ckpt'}\); `imaginebench pipeline --env Ball-v0` grounds one.*imaginebench imagine --checkpoint CKPT --env Ball-v0 --level easy"
    with pytest.raises(UserInputError, match=message):
        imaginary_dataset_dir("Ball-v0", "easy", tmp_path / "data")


@pytest.mark.parametrize(
    "settings, field",
    [
        ({"seed": 0, "temperature": 0.0}, "rollouts"),
        ({**TINY_SETTINGS, "rollouts": 0}, "rollouts"),
        ({**TINY_SETTINGS, "rollouts": 2.5}, "rollouts"),
        ({**TINY_SETTINGS, "rollouts": {"rephrase": 7, "easy": 7}}, "rollouts"),
        ({**TINY_SETTINGS, "rollouts": {"rephrase": 7, "easy": 7, "hard": 0}}, "rollouts"),
        ({**TINY_SETTINGS, "rollouts": {"rephrase": 7, "easy": 7, "hard": 7, "train": 7}}, "rollouts"),
        ({**TINY_SETTINGS, "seed": -1}, "seed"),
        ({**TINY_SETTINGS, "seed": True}, "seed"),
        ({**TINY_SETTINGS, "temperature": "0"}, "temperature"),
        ({**TINY_SETTINGS, "temperature": -0.5}, "temperature"),
        ({**TINY_SETTINGS, "temprature": 1.0}, "temprature"),
        ({**TINY_SETTINGS, "next_states": "dreams"}, "next_states"),
    ],
)
def test_invalid_imagination_settings_name_the_file_and_field(tmp_path, settings, field):
    path = tmp_path / "imagination.json"
    path.write_text(json.dumps(settings))
    with pytest.raises(ValueError, match=rf"^{path}: field '{field}' ") as error:
        read_imagination_settings(path)
    assert "\n" not in str(error.value)


def test_a_shipped_checkpoint_without_settings_is_an_error_naming_the_file(tmp_path, monkeypatch):
    (tmp_path / "BabyAI-v0").mkdir()
    (tmp_path / "BabyAI-v0" / "grounding.ckpt").write_bytes(b"never loaded")
    monkeypatch.setattr("imaginebench.assets.ASSETS_DIR", tmp_path)
    with pytest.raises(FileNotFoundError, match=rf"{tmp_path / 'BabyAI-v0' / 'imagination.json'}: missing"):
        shipped_model("BabyAI-v0")
    (tmp_path / "BabyAI-v0" / "imagination.json").write_text("{rollouts: 3")
    with pytest.raises(ValueError, match=rf"{tmp_path / 'BabyAI-v0' / 'imagination.json'}: not valid JSON"):
        shipped_model("BabyAI-v0")


def dynamics_datasets(env_id: str, data: dict) -> list[str]:
    """The dynamics-only datasets a grounding's data section names, by path or by collection settings."""
    from imaginebench.collect import ExplorationData, exploration_dataset_dir

    declared = data.get("dynamics_collect")
    collected = [] if declared is None else [exploration_dataset_dir(env_id, ExplorationData(**declared), "data")]
    return [*data.get("dynamics_real", []), *map(str, collected)]


@pytest.mark.parametrize("env_id", [env_id for env_id in env_ids() if shipped_checkpoint(env_id).is_file()])
def test_each_shipped_model_was_grounded_with_its_envs_grounding_config(env_id):
    """The config documents the shipped model: what `imaginebench ground --config` would train is what ships."""
    config = yaml.safe_load((Path(__file__).parents[1] / get_domain(env_id).grounding_config).read_text())
    checkpoint = torch.load(shipped_checkpoint(env_id), map_location="cpu", weights_only=False)
    model, data = checkpoint["hyper_parameters"], checkpoint["datamodule_hyper_parameters"]
    assert {key: model.get(key) for key in config["model"]} == config["model"]
    plain = {key: value for key, value in config["data"].items() if not key.startswith("dynamics_")}
    assert {key: data.get(key) for key in plain} == plain
    assert dynamics_datasets(env_id, data) == dynamics_datasets(env_id, config["data"])
