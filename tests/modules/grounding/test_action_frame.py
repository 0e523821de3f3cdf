"""Action frames: an action slot that also reads the latest state seen from the action (CLEVR-Robot's pushes)."""

from __future__ import annotations

import pytest
import torch

from datamodules.grounding_data import GroundingDataModule
from datamodules.grounding_prompts import ACTION, STATE
from imaginebench.collect import collect
from imaginebench.envs.clevr.push_frame import push_frame
from tests.grounding_fixtures import (
    TINY,
    assert_decoding_embeds_each_slot_as_training,
    assert_generation_with_a_kv_cache_equals_generation_without,
    generation_batch,
)


@pytest.fixture(scope="module")
def clevr(tmp_path_factory):
    real = collect("Ball-v0", "train", 12, tmp_path_factory.mktemp("clevr") / "real-train", seed=5, progress=False)
    options = {"batch_size": 4, "batches_per_epoch": 2, "val_fraction": 0.2, "val_batches": 1}
    datamodule = GroundingDataModule("Ball-v0", real=[str(real)], **options)
    datamodule.setup()
    return datamodule


@pytest.fixture(scope="module")
def babyai(babyai_real):
    datamodule = GroundingDataModule("BabyAI-v0", real=[str(babyai_real)], val_fraction=0.1)
    datamodule.setup()
    return datamodule


def framed_module(datamodule, action_frame: str | None = "clevr-push", **options):
    from modules.grounding.model import GroundingModule

    torch.manual_seed(0)
    module = GroundingModule(
        datamodule.env_spec,
        vocabulary=datamodule.vocabulary,
        predict_state_change=True,
        state_change_bin_width=0.01,
        max_state_change=0.25,
        action_frame=action_frame,
        **TINY,
        **options,
    )
    module.use_statistics(datamodule)
    return module.eval()


def test_an_action_slot_reads_the_state_before_it_seen_from_the_action(clevr):
    module, rollout = framed_module(clevr), clevr.train_rollouts[0]
    batch = generation_batch(module, rollout, len(rollout.actions))
    embedded = module.embed(batch)
    action_slots = (batch["kinds"][0] == ACTION).nonzero().flatten()
    expected = module.action_projection(rollout.actions) + module.action_frame_projection(
        push_frame(rollout.states[:-1], rollout.actions)
    )
    torch.testing.assert_close(embedded[0, action_slots], expected)
    plain = framed_module(clevr, action_frame=None)
    moved = {**batch, "states": batch["states"] + 0.1}
    changed = (plain.embed(moved) - plain.embed(batch)).abs().sum(-1) > 0
    assert torch.equal(changed, batch["kinds"] == STATE)  # without a frame an action slot ignores the states


def test_decoding_embeds_each_slot_as_training_embeds_the_same_rollout(clevr):
    rollout = clevr.train_rollouts[1]
    assert_decoding_embeds_each_slot_as_training(framed_module(clevr), rollout, len(rollout.actions))


def test_babyai_decoding_embeds_each_slot_with_its_frame_as_training_does(babyai):
    rollout = babyai.train_rollouts[0]
    module = framed_module(babyai, action_frame="babyai-agent")
    assert_decoding_embeds_each_slot_as_training(module, rollout, len(rollout.actions))


def test_framed_generation_with_a_kv_cache_equals_generation_without(clevr):
    assert_generation_with_a_kv_cache_equals_generation_without(framed_module(clevr), clevr.train_rollouts[:3], 4)


def test_an_unknown_or_mismatched_frame_is_a_one_line_error_naming_the_option(clevr, babyai):
    with pytest.raises(ValueError, match="model.action_frame: unknown frame 'nope'; known: babyai-agent, clevr-push"):
        framed_module(clevr, action_frame="nope")
    with pytest.raises(ValueError, match="model.action_frame: 'clevr-push' reads 10 state numbers and 40 actions"):
        framed_module(babyai)
