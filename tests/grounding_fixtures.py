"""Tiny grounded models and real BabyAI episodes shared by the grounding, imagination and quality tests."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from lightning.pytorch import Trainer

from datamodules.grounding_data import GroundingDataModule, episode_rollouts
from datamodules.grounding_prompts import ACTION, STATE
from imaginebench.collect import collect
from imaginebench.datasets import load_episodes
from modules.grounding.generation import _slot_embedding, imagine_rollouts
from modules.grounding.model import GroundingModule

TINY = {"hidden_size": 32, "num_layers": 2, "num_heads": 2, "intermediate_size": 64, "max_positions": 256}
"""A backbone small enough to train for a few steps in a test."""


@pytest.fixture(scope="session")
def babyai_real(tmp_path_factory) -> Path:
    """40 expert episodes of the BabyAI train tasks (well under a second to collect)."""
    return collect(
        "BabyAI-v0", "train", 40, tmp_path_factory.mktemp("grounding") / "real-train", seed=3, progress=False
    )


@pytest.fixture(scope="session")
def rollouts(babyai_real):
    return episode_rollouts(load_episodes(babyai_real))


def tiny_datamodule(real: Path, **overrides) -> GroundingDataModule:
    options = {"batch_size": 8, "batches_per_epoch": 3, "val_fraction": 0.1, "val_batches": 1, **overrides}
    datamodule = GroundingDataModule("BabyAI-v0", real=[str(real)], **options)
    datamodule.setup()
    return datamodule


def tiny_module(datamodule: GroundingDataModule, **overrides) -> GroundingModule:
    options = {"vocabulary": datamodule.vocabulary, **TINY, **overrides}
    module = GroundingModule(datamodule.env_spec, round_states=True, explanation_eval_rollouts=2, **options)
    module.use_statistics(datamodule)
    return module


def fit_tiny(tmp_path, babyai_real, **module_options) -> tuple[GroundingModule, str, object]:
    datamodule = tiny_datamodule(babyai_real)
    module = tiny_module(datamodule, **module_options)
    trainer = Trainer(
        max_steps=3,
        default_root_dir=tmp_path,
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        limit_val_batches=1,
        num_sanity_val_steps=0,
        accelerator="cpu",
    )
    trainer.fit(module, datamodule)
    path = str(tmp_path / "grounded.ckpt")
    trainer.save_checkpoint(path)
    return module, path, datamodule


@pytest.fixture(scope="session")
def grounded_checkpoint(tmp_path_factory, babyai_real) -> str:
    return fit_tiny(tmp_path_factory.mktemp("grounded"), babyai_real)[1]


def generation_batch(module: GroundingModule, rollout, steps: int) -> dict[str, torch.Tensor]:
    """The generation example of the first ``steps`` steps of ``rollout``, collated alone."""
    return module.builder.collate(
        [module.builder.generation(rollout.instruction, rollout.states[: steps + 1], rollout.actions[:steps])]
    )


def assert_decoding_embeds_each_slot_as_training(module: GroundingModule, rollout, steps: int) -> None:
    """Imagination feeds slots one at a time; each must get the embedding the rollout's training sequence gives it
    (the first ``steps`` steps), or the model would read generated slots in a form it never saw."""
    batch = generation_batch(module, rollout, steps)
    embedded = module.embed(batch)[0]
    slots = (batch["kinds"][0] != 0).nonzero().flatten()[1:]  # every slot after the first state
    for step in range(steps):
        previous = rollout.states[step : step + 1]
        action_embedding = _slot_embedding(module, ACTION, rollout.actions[step : step + 1], previous)
        state_embedding = _slot_embedding(module, STATE, rollout.states[step + 1 : step + 2], previous)
        torch.testing.assert_close(action_embedding[0], embedded[slots[2 * step]])
        torch.testing.assert_close(state_embedding[0], embedded[slots[2 * step + 1]])


def assert_generation_with_a_kv_cache_equals_generation_without(module: GroundingModule, rollouts, steps: int) -> None:
    first = torch.stack([r.states[0] for r in rollouts])
    runs = [
        imagine_rollouts(module, [r.instruction for r in rollouts], first, lambda row, s: False, steps, use_cache=cache)
        for cache in (True, False)
    ]
    torch.testing.assert_close(runs[0].actions, runs[1].actions)
    torch.testing.assert_close(runs[0].states, runs[1].states)
