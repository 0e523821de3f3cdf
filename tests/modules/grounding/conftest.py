"""Tiny grounded models and real BabyAI episodes shared by the grounding tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from datamodules.grounding_data import GroundingDataModule, episode_rollouts
from imaginebench.collect import collect
from imaginebench.datasets import load_episodes
from modules.grounding.model import GroundingModule

TINY = {"hidden_size": 32, "num_layers": 2, "num_heads": 2, "intermediate_size": 64, "max_positions": 256}
"""A backbone small enough to train for a few steps in a test."""


@pytest.fixture(scope="session")
def babyai_real(tmp_path_factory) -> Path:
    """40 expert episodes of the BabyAI train tasks (well under a second to collect)."""
    return collect("BabyAI-v0", "train", 40, tmp_path_factory.mktemp("grounding") / "real-train", seed=3, progress=False)


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
    mean, std = datamodule.state_statistics()
    module.state_mean.copy_(mean)
    module.state_std.copy_(std)
    return module
