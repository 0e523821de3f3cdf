"""benchmarks/episode_subset.py draws the episodes it is asked for, whole, and labels them as the run will read them."""

from __future__ import annotations

import importlib.util
from collections import Counter
from pathlib import Path

import pytest
import torch

from imaginebench.errors import UserInputError
from tests.synthetic_episodes import synthetic_dataset

REPO = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("episode_subset", REPO / "benchmarks" / "episode_subset.py")
episode_subset = importlib.util.module_from_spec(spec)
spec.loader.exec_module(episode_subset)


def test_a_length_matched_subset_has_the_asked_lengths_and_whole_episodes():
    dataset = synthetic_dataset("real", lengths=[1, 2, 3, 4] * 10)
    wanted = Counter({1: 7, 3: 2, 4: 1})
    episodes = episode_subset.drawn_episodes(episode_subset.episode_lengths(dataset), wanted, seed=0)
    chosen = episode_subset.subset(dataset, episodes, "imaginary")
    assert Counter(episode_subset.episode_lengths(chosen).values()) == wanted
    assert chosen.metadata["source"] == "imaginary" and chosen.metadata["counts"]["episodes"] == 10
    for episode, length in episode_subset.episode_lengths(chosen).items():
        rows = chosen.steps["episode_id"] == episode
        assert torch.equal(chosen.steps["step"][rows], torch.arange(length))
    assert dataset.metadata["source"] == "real"  # the source dataset is left as it was


def test_a_random_subset_is_seeded_and_refuses_more_than_there_are():
    lengths = episode_subset.episode_lengths(synthetic_dataset("real", lengths=[2] * 30))
    assert episode_subset.drawn_episodes(lengths, 5, seed=3) == episode_subset.drawn_episodes(lengths, 5, seed=3)
    assert episode_subset.drawn_episodes(lengths, 5, seed=3) != episode_subset.drawn_episodes(lengths, 5, seed=4)
    with pytest.raises(UserInputError, match="--episodes 31: the dataset holds 30"):
        episode_subset.drawn_episodes(lengths, 31, seed=0)
    with pytest.raises(UserInputError, match="--lengths-like: too few source episodes of lengths \\[1\\]"):
        episode_subset.drawn_episodes(lengths, Counter({1: 1}), seed=0)
