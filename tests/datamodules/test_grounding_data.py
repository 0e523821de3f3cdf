"""Grounding examples drawn from real rollouts: windows of long rollouts (``data.window_steps``)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from datamodules.grounding_data import rollout_window
from datamodules.grounding_prompts import ACTION, STATE, TEXT, SequenceBuilder
from imaginebench.errors import UserInputError
from modules.grounding.backbone import word_level_tokenizer
from tests.grounding_fixtures import tiny_datamodule, tiny_module

WINDOW = 3


def examples_of(datamodule, task: str, count: int = 64):
    datamodule.task_names, datamodule.task_probabilities = [task], np.array([1.0])
    return datamodule._examples(datamodule.train_rollouts, np.random.default_rng(0), count)


def window_start(rollouts, example) -> int:
    """Where the example's states lie in its own rollout (the one with its instruction and those states)."""
    for rollout in rollouts:
        if rollout.instruction != example.instruction:
            continue
        for first in range(len(rollout.actions)):
            window = rollout.states[first : first + len(example.states)]
            if len(window) == len(example.states) and torch.equal(window, example.states):
                assert torch.equal(rollout.actions[first : first + len(example.actions)], example.actions)
                return first
    raise AssertionError("the example's states are no contiguous part of a rollout with its instruction")


def test_a_window_is_a_clipped_slice_that_trains_every_step_equally_often():
    steps = 10
    states, actions = torch.arange(steps + 1.0)[:, None], torch.arange(steps)
    rng = np.random.default_rng(0)
    coverage = torch.zeros(steps)
    draws = 4000
    for _ in range(draws):
        window_states, window_actions = rollout_window(states, actions, 4, rng)
        first, length = int(window_states[0, 0]), len(window_actions)
        assert 0 <= first < steps and 1 <= length <= 4
        assert length == 4 or first == 0 or first + length == steps  # only a window at an end is clipped
        assert torch.equal(window_states[:, 0], states[first : first + length + 1, 0])
        assert torch.equal(window_actions, actions[first : first + length])
        coverage[first : first + length] += 1
    assert (coverage / draws - 4 / (steps + 4 - 1)).abs().max() < 0.04  # the first and last steps too
    whole = rollout_window(states, actions, steps, rng)
    assert whole[0] is states and whole[1] is actions  # a rollout that fits stays whole


def test_without_a_window_or_with_one_longer_than_every_rollout_the_examples_are_unchanged(babyai_real):
    plain = tiny_datamodule(babyai_real)
    wide = tiny_datamodule(babyai_real, window_steps=max(len(r.actions) for r in plain.train_rollouts))
    for task in ("generation", "explanation"):
        for a, b in zip(examples_of(plain, task), examples_of(wide, task), strict=True):
            assert (a.instruction, a.step) == (b.instruction, b.step)
            assert torch.equal(a.states, b.states) and torch.equal(a.actions, b.actions)
            assert len(a.actions) == len(next(r for r in plain.train_rollouts if r.states is a.states).actions)


def test_a_windowed_generation_example_is_a_generation_example_of_the_window(babyai_real):
    datamodule = tiny_datamodule(babyai_real, window_steps=WINDOW)
    builder = SequenceBuilder(word_level_tokenizer(datamodule.vocabulary), 17, discrete_actions=True)
    examples = examples_of(datamodule, "generation")
    assert all(len(e.actions) <= WINDOW for e in examples) and any(len(e.actions) == WINDOW for e in examples)
    starts = [window_start(datamodule.train_rollouts, e) for e in examples]
    assert any(start > 0 for start in starts)  # windows start inside the rollout, not only at its reset
    for example in examples:
        sequence = builder.build(example)
        kinds = sequence.kinds.tolist()
        first_state = kinds.index(STATE)
        prompt = builder.tokenize(f"Instruction: {example.instruction} Rollout:")
        assert sequence.token_ids[:first_state].tolist() == list(prompt) and set(kinds[:first_state]) == {TEXT}
        assert kinds[first_state:] == [STATE] + [ACTION, STATE] * len(example.actions)
        torch.testing.assert_close(sequence.states[first_state], example.states[0])  # the window's first state ...
        assert not sequence.supervised[: first_state + 1].any()  # ... is given, as s₀ is
        assert sequence.supervised[first_state + 1 :].all()  # every later action and state is a target


def test_explanations_read_windows_and_consequence_and_dynamics_read_the_whole_rollout(babyai_real):
    datamodule = tiny_datamodule(babyai_real, window_steps=WINDOW)
    explained = examples_of(datamodule, "explanation")
    assert all(len(e.actions) <= WINDOW for e in explained)
    for example in explained:
        window_start(datamodule.train_rollouts, example)
    for task in ("consequence", "dynamics"):
        for example in examples_of(datamodule, task):
            assert any(example.states is r.states for r in datamodule.train_rollouts)


def test_windowed_examples_train(babyai_real):
    """A smoke test: a few updates on a batch of windowed examples of every task cut its loss."""
    torch.manual_seed(0)
    datamodule = tiny_datamodule(babyai_real, window_steps=WINDOW)
    module = tiny_module(datamodule, finetune="full", window_steps=WINDOW)
    batch = module.on_before_batch_transfer(next(datamodule._batches(datamodule.train_rollouts, (0,), 1)), 0)
    optimizer = torch.optim.Adam(module.parameters(), lr=3e-3)
    totals = []
    for _ in range(5):
        optimizer.zero_grad()
        loss = module.losses(batch)["total"]
        loss.backward()
        optimizer.step()
        totals.append(float(loss.detach()))
    assert np.isfinite(totals).all() and totals[-1] < totals[0]


@pytest.mark.parametrize("window_steps", [0, -2])
def test_a_window_of_no_steps_is_an_error_naming_the_option(babyai_real, window_steps):
    with pytest.raises(UserInputError, match=rf"^data.window_steps must be >= 1, got {window_steps}$"):
        tiny_datamodule(babyai_real, window_steps=window_steps)
    with pytest.raises(UserInputError, match=rf"^model.window_steps must be >= 1, got {window_steps}$"):
        tiny_module(tiny_datamodule(babyai_real), window_steps=window_steps)


@pytest.fixture(scope="module")
def noisy_real(tmp_path_factory):
    from imaginebench.collect import collect

    return collect(
        "BabyAI-v0",
        "train",
        30,
        tmp_path_factory.mktemp("noisy") / "real-train-eps",
        seed=9,
        progress=False,
        epsilon=0.5,
    )


def test_dynamics_real_feeds_dynamics_examples_only_and_stays_out_of_validation(babyai_real, noisy_real):
    plain = tiny_datamodule(babyai_real, batches_per_epoch=30)
    extra = tiny_datamodule(babyai_real, batches_per_epoch=30, dynamics_real=[str(noisy_real)])
    assert len(extra.dynamics_rollouts) == 30 and not plain.dynamics_rollouts
    assert [r.instruction for r in extra.val_rollouts] == [r.instruction for r in plain.val_rollouts]
    noisy_actions = {tuple(r.actions.tolist()) for r in extra.dynamics_rollouts}
    used = {"dynamics": 0, "other": 0}
    for batch in extra.train_dataloader():
        for example in batch:
            if tuple(example.actions.tolist()) in noisy_actions:
                used["dynamics" if example.task == "dynamics" else "other"] += 1
    assert used["dynamics"] > 0 and used["other"] == 0
    assert state_statistics_equal(plain, extra)  # the model's standardisation reads the expert rollouts only


def state_statistics_equal(a, b) -> bool:
    return all(torch.equal(x, y) for x, y in zip(a.state_statistics(), b.state_statistics()))


def test_a_missing_dynamics_dataset_is_an_error_naming_the_option(babyai_real, tmp_path):
    from datamodules.grounding_data import GroundingDataModule
    from imaginebench.datasets import DatasetError

    datamodule = GroundingDataModule("BabyAI-v0", real=[str(babyai_real)], dynamics_real=[str(tmp_path / "nope")])
    with pytest.raises(DatasetError, match="data.dynamics_real: .*nope is neither a dataset directory"):
        datamodule.prepare_data()


def test_dynamics_collect_collects_its_exploration_data_once_and_grounds_dynamics_on_it(
    babyai_real, tmp_path, monkeypatch
):
    from datamodules.grounding_data import GroundingDataModule
    from imaginebench.collect import ExplorationData
    from imaginebench.datasets import load_episodes

    monkeypatch.setenv("IMAGINEBENCH_DATA", str(tmp_path))
    declared = ExplorationData(episodes=12, epsilon=0.5, steps_after_success=3, seed=5)
    datamodule = GroundingDataModule("BabyAI-v0", real=[str(babyai_real)], dynamics_collect=declared)
    datamodule.prepare_data()
    collected = tmp_path / "BabyAI-v0" / "real-train-eps0.5-after3"
    made_by = load_episodes(collected).metadata["produced_by"]["config"]
    assert {k: made_by[k] for k in ("episodes", "epsilon", "steps_after_success", "seed")} == {
        "episodes": 12,
        "epsilon": 0.5,
        "steps_after_success": 3,
        "seed": 5,
    }
    datamodule.setup()
    assert len(datamodule.dynamics_rollouts) == 12 and datamodule.dynamics_paths == [str(collected)]
    written = (collected / "metadata.json").stat().st_mtime_ns
    GroundingDataModule("BabyAI-v0", real=[str(babyai_real)], dynamics_collect=declared).prepare_data()
    assert (collected / "metadata.json").stat().st_mtime_ns == written  # found, not collected again


def test_dynamics_collect_refuses_data_collected_with_other_settings_and_leaves_them(
    babyai_real, tmp_path, monkeypatch
):
    from datamodules.grounding_data import GroundingDataModule
    from imaginebench.collect import ExplorationData
    from imaginebench.datasets import DatasetError

    monkeypatch.setenv("IMAGINEBENCH_DATA", str(tmp_path))
    GroundingDataModule(
        "BabyAI-v0", real=[str(babyai_real)], dynamics_collect=ExplorationData(6, 0.5, 3, seed=5)
    ).prepare_data()
    collected = tmp_path / "BabyAI-v0" / "real-train-eps0.5-after3"
    before = (collected / "metadata.json").read_text()
    other_seed = GroundingDataModule(
        "BabyAI-v0", real=[str(babyai_real)], dynamics_collect=ExplorationData(6, 0.5, 3, seed=6)
    )
    with pytest.raises(
        DatasetError,
        match=r"data.dynamics_collect: .*real-train-eps0.5-after3: collected with seed 5, the config asks for 6",
    ):
        other_seed.prepare_data()
    assert (collected / "metadata.json").read_text() == before


@pytest.mark.parametrize(
    ("env_id", "data", "message"),
    [
        ("BabyAI-v0", {"episodes": 0, "epsilon": 0.5}, "data.dynamics_collect: episodes must be >= 1, got 0"),
        ("BabyAI-v0", {"episodes": 5, "epsilon": 1.5}, r"data.dynamics_collect: epsilon must lie in \(0, 1\], got 1.5"),
        ("BabyAI-v0", {"episodes": 5, "epsilon": 0.5, "steps_after_success": -1}, "steps_after_success must be >= 0"),
        ("Mujoco-v0", {"episodes": 5, "epsilon": 0.5}, "data.dynamics_collect: needs a discrete action space"),
    ],
)
def test_bad_dynamics_collect_settings_are_refused_naming_the_field_before_any_work(tmp_path, env_id, data, message):
    from datamodules.grounding_data import GroundingDataModule
    from imaginebench.collect import ExplorationData

    with pytest.raises(UserInputError, match=message):
        GroundingDataModule(env_id, real=[str(tmp_path / "unused")], dynamics_collect=ExplorationData(**data))
    assert not any(tmp_path.iterdir())
