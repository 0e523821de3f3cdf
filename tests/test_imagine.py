"""``imaginebench imagine``: datasets of imaginary rollouts from a grounded checkpoint."""

from __future__ import annotations

import numpy as np
import pytest

from imaginebench.collect import episode_seed
from imaginebench.commands.imagine import imagine
from imaginebench.datasets import load_episodes
from imaginebench.errors import UserInputError
from imaginebench.registry import make


def test_imagined_dataset_validates_and_records_its_provenance(tmp_path, grounded_checkpoint):
    out = imagine(
        grounded_checkpoint,
        "BabyAI-v0",
        "easy",
        10,
        tmp_path / "easy",
        seed=4,
        batch_size=4,
        shard_episodes=4,
        progress=False,
    )
    dataset = load_episodes(out)  # validates schema, shapes, ids and contiguity
    assert dataset.source == "imaginary" and dataset.metadata["level"] == "easy"
    assert dataset.num_episodes == 10
    generator = dataset.metadata["generator"]
    assert (
        generator["seed"] == 4
        and generator["checkpoint"] == grounded_checkpoint
        and len(generator["checkpoint_sha256"]) == 64
    )
    assert generator["decoding"] == "greedy" and generator["model"]["finetune"] == "lora"
    assert dataset.counts()["per_task"] == {
        task: {"episodes": e, "successes": dataset.counts()["per_task"][task]["successes"]}
        for task, e in zip(dataset.tasks, (3, 3, 2, 2))
    }  # fmt: skip  (round robin)
    env = make("BabyAI-v0", "easy")
    steps = dataset.steps
    for episode in (0, 7):
        rows = (steps["episode_id"] == episode).nonzero().flatten()
        observation, info = env.reset(seed=episode_seed(4, episode), options={"task": dataset.tasks[episode % 4]})
        np.testing.assert_array_equal(steps["state"][rows[0]].numpy(), observation["state"])  # s0 comes from the env
        assert dataset.instruction_texts[int(steps["instruction_id"][rows[0]])] == info["instruction"]
        assert int(rows.numel()) <= env.horizon
        np.testing.assert_array_equal(steps["state"][rows[1:]].numpy(), steps["next_state"][rows[:-1]].numpy())
        states = np.concatenate([steps["state"][rows].numpy(), steps["next_state"][rows[-1:]].numpy()])
        rewards = env.imagined_rewards(states, steps["action"][rows].numpy(), env.success_flags(states))
        np.testing.assert_allclose(steps["reward"][rows].numpy(), rewards, rtol=1e-6)  # the env's, stored as float32


def test_imagination_is_reproducible_and_refuses_to_overwrite(tmp_path, grounded_checkpoint):
    first = load_episodes(
        imagine(grounded_checkpoint, "BabyAI-v0", "hard", 5, tmp_path / "a", seed=1, batch_size=2, progress=False)
    )
    second = load_episodes(
        imagine(grounded_checkpoint, "BabyAI-v0", "hard", 5, tmp_path / "b", seed=1, batch_size=5, progress=False)
    )
    for key in ("state", "next_state", "action", "success", "episode_id"):
        assert (first.steps[key] == second.steps[key]).all(), key
    with pytest.raises(UserInputError, match="--overwrite"):
        imagine(grounded_checkpoint, "BabyAI-v0", "hard", 5, tmp_path / "a", progress=False)


def test_imagine_rejects_bad_arguments(tmp_path, grounded_checkpoint):
    with pytest.raises(UserInputError, match="--checkpoint"):
        imagine(tmp_path / "missing.ckpt", "BabyAI-v0", "easy", 2, tmp_path / "x", progress=False)
    with pytest.raises(ValueError, match="--rollouts"):
        imagine(grounded_checkpoint, "BabyAI-v0", "easy", 0, tmp_path / "x", progress=False)
    with pytest.raises(ValueError, match="level"):
        imagine(grounded_checkpoint, "BabyAI-v0", "impossible", 2, tmp_path / "x", progress=False)


def test_next_states_from_the_dynamics_prompt_are_recorded_and_a_bad_choice_writes_nothing(
    tmp_path, grounded_checkpoint
):
    dataset = load_episodes(
        imagine(grounded_checkpoint, "BabyAI-v0", "hard", 3, tmp_path / "d", next_states="dynamics", progress=False)
    )
    assert dataset.metadata["generator"]["next_states"] == "dynamics"
    with pytest.raises(UserInputError, match="--next-states 'simulator'"):
        imagine(grounded_checkpoint, "BabyAI-v0", "hard", 3, tmp_path / "x", next_states="simulator", progress=False)
    assert not (tmp_path / "x").exists() and not list(tmp_path.glob("x*"))
