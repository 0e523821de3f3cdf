"""``action_reads_state``: an action slot that also reads the standardised state it acts on, through an MLP."""

from __future__ import annotations

import pytest
import torch

from datamodules.grounding_data import GroundingDataModule
from datamodules.grounding_prompts import ACTION
from imaginebench.collect import collect
from tests.grounding_fixtures import (
    TINY,
    assert_decoding_embeds_each_slot_as_training,
    assert_generation_with_a_kv_cache_equals_generation_without,
    generation_batch,
    tiny_datamodule,
)


@pytest.fixture(scope="module")
def halfcheetah(tmp_path_factory) -> GroundingDataModule:
    real = collect("Mujoco-v0", "train", 4, tmp_path_factory.mktemp("cheetah") / "real-train", seed=2, progress=False)
    options = {"batch_size": 4, "batches_per_epoch": 2, "val_fraction": 0.25, "val_batches": 1, "window_steps": 6}
    datamodule = GroundingDataModule("Mujoco-v0", real=[str(real)], real_levels=[], **options)
    datamodule.setup()
    return datamodule


def reading_module(datamodule: GroundingDataModule):
    from modules.grounding.model import GroundingModule

    torch.manual_seed(0)
    module = GroundingModule(
        datamodule.env_spec,
        vocabulary=datamodule.vocabulary,
        predict_state_change=True,
        action_reads_state=True,
        window_steps=datamodule.hparams.window_steps,
        **TINY,
    )
    module.use_statistics(datamodule)
    return module.eval()


def test_an_action_slot_adds_the_mlp_of_the_standardised_state_before_it_and_the_action(halfcheetah):
    module, rollout = reading_module(halfcheetah), halfcheetah.train_rollouts[0]
    batch = generation_batch(module, rollout, 5)
    action_slots = (batch["kinds"][0] == ACTION).nonzero().flatten()
    states, actions = rollout.states[:5], rollout.actions[:5]
    expected = module.action_projection(actions) + module.state_action_encoder.mlp(
        torch.cat([module.standardize(states), actions], dim=-1)
    )
    torch.testing.assert_close(module.embed(batch)[0, action_slots], expected)


def test_decoding_embeds_each_slot_as_training_embeds_the_same_rollout(halfcheetah):
    assert_decoding_embeds_each_slot_as_training(reading_module(halfcheetah), halfcheetah.train_rollouts[1], 5)


def test_generation_with_a_kv_cache_equals_generation_without(halfcheetah):
    assert_generation_with_a_kv_cache_equals_generation_without(
        reading_module(halfcheetah), halfcheetah.train_rollouts[:2], 8
    )


def test_a_discrete_action_is_read_one_hot(babyai_real):
    datamodule = tiny_datamodule(babyai_real)
    module = reading_module(datamodule)
    rollout = datamodule.train_rollouts[0]
    batch = generation_batch(module, rollout, 3)
    action_slots = (batch["kinds"][0] == ACTION).nonzero().flatten()
    one_hot = torch.nn.functional.one_hot(rollout.actions[:3].long(), datamodule.env_spec["num_actions"])
    expected = module.action_projection(rollout.actions[:3]) + module.state_action_encoder.mlp(
        torch.cat([module.standardize(rollout.states[:3]), one_hot.float()], dim=-1)
    )
    torch.testing.assert_close(module.embed(batch)[0, action_slots], expected)
