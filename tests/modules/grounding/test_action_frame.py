"""Action frames: an action slot that also reads the latest state seen from the action (CLEVR-Robot's pushes)."""

from __future__ import annotations

import pytest
import torch

from datamodules.grounding_data import GroundingDataModule
from datamodules.grounding_prompts import ACTION, STATE
from imaginebench.collect import collect
from imaginebench.envs.clevr.push_frame import push_frame
from modules.grounding.generation import _slot_embedding, imagine_rollouts
from tests.grounding_fixtures import TINY


@pytest.fixture(scope="module")
def clevr(tmp_path_factory):
    real = collect("Ball-v0", "train", 12, tmp_path_factory.mktemp("clevr") / "real-train", seed=5, progress=False)
    options = {"batch_size": 4, "batches_per_epoch": 2, "val_fraction": 0.2, "val_batches": 1}
    datamodule = GroundingDataModule("Ball-v0", real=[str(real)], **options)
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


def generation_batch(module, rollout):
    return module.builder.collate([module.builder.generation(rollout.instruction, rollout.states, rollout.actions)])


def test_an_action_slot_reads_the_state_before_it_seen_from_the_action(clevr):
    module, rollout = framed_module(clevr), clevr.train_rollouts[0]
    batch = generation_batch(module, rollout)
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
    """Imagination feeds slots one at a time; each must get the embedding the rollout's training sequence gives it,
    or the model would read generated actions in a frame it never saw."""
    module, rollout = framed_module(clevr), clevr.train_rollouts[1]
    batch = generation_batch(module, rollout)
    embedded = module.embed(batch)[0]
    slots = (batch["kinds"][0] != 0).nonzero().flatten()[1:]  # every slot after the first state
    for step in range(len(rollout.actions)):
        previous = rollout.states[step : step + 1]
        action_embedding = _slot_embedding(module, ACTION, rollout.actions[step : step + 1], previous)
        state_embedding = _slot_embedding(module, STATE, rollout.states[step + 1 : step + 2], previous)
        torch.testing.assert_close(action_embedding[0], embedded[slots[2 * step]])
        torch.testing.assert_close(state_embedding[0], embedded[slots[2 * step + 1]])


def test_framed_generation_with_a_kv_cache_equals_generation_without(clevr):
    module, rollouts = framed_module(clevr), clevr.train_rollouts[:3]
    first = torch.stack([r.states[0] for r in rollouts])
    runs = [
        imagine_rollouts(module, [r.instruction for r in rollouts], first, lambda row, s: False, 4, use_cache=cache)
        for cache in (True, False)
    ]
    assert torch.equal(runs[0].actions, runs[1].actions)
    torch.testing.assert_close(runs[0].states, runs[1].states)


def test_an_unknown_or_mismatched_frame_is_a_one_line_error_naming_the_option(clevr, babyai_real):
    with pytest.raises(ValueError, match="model.action_frame: unknown frame 'nope'; known: clevr-push"):
        framed_module(clevr, action_frame="nope")
    babyai = GroundingDataModule("BabyAI-v0", real=[str(babyai_real)], val_fraction=0.1)
    babyai.setup()
    with pytest.raises(ValueError, match="model.action_frame: 'clevr-push' reads 10 state numbers and 40 actions"):
        framed_module(babyai)
