import json

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from tensordict import TensorDict

from imaginebench.datasets import DatasetError, EpisodeDataset, concat_datasets, load_episodes, to_transitions, write_episodes
from imaginebench.datasets.legacy import to_padded_arrays


def synthetic(lengths: list[int], source: str = "real", state_dim: int = 3, embedding_dim: int = 4, seed: int = 0) -> EpisodeDataset:
    """Episodes of the given lengths; state[:, 0] encodes the episode and state[:, 1] the step."""
    gen = torch.Generator().manual_seed(seed)
    episode_id = torch.cat([torch.full((n,), e) for e, n in enumerate(lengths)]).long()
    step = torch.cat([torch.arange(n) for n in lengths]).long()
    n = int(step.numel())
    state = torch.randn(n, state_dim, generator=gen)
    state[:, 0], state[:, 1] = episode_id.float(), step.float()
    last = torch.zeros(n, dtype=torch.bool)
    last[torch.cumsum(torch.tensor(lengths), 0) - 1] = True
    steps = TensorDict(
        {
            "state": state, "next_state": state + 1, "action": torch.randint(0, 5, (n,), generator=gen),
            "reward": torch.rand(n, generator=gen), "terminated": last.clone(), "truncated": torch.zeros(n, dtype=torch.bool),
            "success": last.clone(), "episode_id": episode_id, "step": step,
            "task_id": episode_id % 2, "instruction_id": episode_id % 3,
        },
        batch_size=[n],
    )  # fmt: skip
    metadata = {
        "env_id": "Toy-v0", "level": "train", "source": source, "encoder_id": "toy:mean", "embedding_dim": embedding_dim,
        "state_dim": state_dim, "action_kind": "discrete", "num_actions": 5, "tasks": ["A", "B"], "counts": {}, "produced_by": {},
    }  # fmt: skip
    texts = [f"{source} instruction {i}" for i in range(3)]
    return EpisodeDataset(steps, texts, torch.randn(3, embedding_dim, generator=gen), metadata)


def test_round_trip_preserves_every_field(tmp_path):
    original = synthetic([3, 5, 2])
    loaded = load_episodes(write_episodes(original, tmp_path / "ds"))
    for key in original.steps.keys():
        assert torch.equal(loaded.steps[key], original.steps[key]), key
    assert torch.equal(loaded.instruction_embeddings, original.instruction_embeddings)
    assert loaded.instruction_texts == original.instruction_texts
    assert loaded.num_episodes == 3 and loaded.num_steps == 10
    assert loaded.metadata["counts"]["per_task"] == {"A": {"episodes": 2, "successes": 2}, "B": {"episodes": 1, "successes": 1}}


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(1, 6), min_size=1, max_size=6), st.lists(st.integers(1, 6), min_size=1, max_size=6))
def test_concat_keeps_episodes_whole_and_embeddings_attached(lengths_a, lengths_b):
    a, b = synthetic(lengths_a, seed=1), synthetic(lengths_b, source="real", seed=2)
    b.instruction_texts = [f"other {i}" for i in range(3)]
    merged = concat_datasets([a, b])
    assert merged.num_episodes == len(lengths_a) + len(lengths_b)
    # each row's embedding is the one its own dataset assigned to it
    expected = torch.cat([a.instruction_embeddings[a.steps["instruction_id"]], b.instruction_embeddings[b.steps["instruction_id"]]])
    assert torch.equal(merged.instruction_embeddings[merged.steps["instruction_id"]], expected)
    assert torch.equal(merged.steps["state"], torch.cat([a.steps["state"], b.steps["state"]]))


def test_missing_metadata_field_names_file_and_field(tmp_path):
    path = write_episodes(synthetic([2, 2]), tmp_path / "ds")
    meta = json.loads((path / "metadata.json").read_text())
    del meta["encoder_id"]
    (path / "metadata.json").write_text(json.dumps(meta))
    with pytest.raises(DatasetError, match=r"metadata\.json: field 'encoder_id' is missing"):
        load_episodes(path)


def test_nan_state_is_rejected_naming_the_field(tmp_path):
    dataset = synthetic([2, 2])
    dataset.steps["state"][1, 2] = float("nan")
    with pytest.raises(DatasetError, match=r"field 'state' contains NaN"):
        write_episodes(dataset, tmp_path / "ds")
    assert not (tmp_path / "ds").exists()


def test_wrong_dtype_and_broken_episode_order_are_rejected(tmp_path):
    dataset = synthetic([3])
    dataset.steps["reward"] = dataset.steps["reward"].double()
    with pytest.raises(DatasetError, match=r"field 'reward' has dtype torch.float64"):
        write_episodes(dataset, tmp_path / "a")
    dataset = synthetic([3])
    dataset.steps["step"] = torch.tensor([0, 2, 1])
    with pytest.raises(DatasetError, match=r"field 'step'"):
        write_episodes(dataset, tmp_path / "b")


def test_truncated_tensor_file_is_an_error_naming_the_directory(tmp_path):
    path = write_episodes(synthetic([4]), tmp_path / "ds")
    (path / "instructions.json").write_text("[")
    with pytest.raises(DatasetError, match="instructions.json: invalid JSON"):
        load_episodes(path)


def test_failed_write_leaves_existing_dataset_intact(tmp_path):
    path = write_episodes(synthetic([2, 3]), tmp_path / "ds")
    bad = synthetic([4])
    bad.steps["action"][0] = 99
    with pytest.raises(DatasetError):
        write_episodes(bad, path)
    assert load_episodes(path).num_steps == 5
    assert [p.name for p in tmp_path.iterdir()] == ["ds"]


def test_transitions_bootstrap_through_truncation_only():
    dataset = synthetic([2, 3])
    dataset.steps["truncated"][1] = True
    dataset.steps["terminated"][1] = False
    td = to_transitions(dataset)
    assert td["next", "done"][:, 0].tolist() == [False, True, False, False, True]
    assert td["next", "terminated"][:, 0].tolist() == [False, False, False, False, True]
    assert torch.equal(td["instruction_embedding"], dataset.instruction_embeddings[dataset.steps["instruction_id"]])


def test_padded_arrays_match_the_original_layout():
    dataset = synthetic([2, 4], state_dim=3, embedding_dim=4)
    arrays = to_padded_arrays(dataset)
    assert arrays["observations"].shape == (2, 4, 7)
    assert arrays["rewards"].shape == (2, 4, 1) and arrays["masks"].shape == (2, 4, 1)
    assert arrays["masks"][:, :, 0].tolist() == [[1, 1, 0, 0], [1, 1, 1, 1]]
    # state of episode 1, step 3, followed by its instruction embedding
    row = int(np.flatnonzero((dataset.steps["episode_id"] == 1) & (dataset.steps["step"] == 3))[0])
    expected = torch.cat([dataset.steps["state"][row], dataset.instruction_embeddings[dataset.steps["instruction_id"][row]]])
    np.testing.assert_array_equal(arrays["observations"][1, 3], expected.numpy())
    assert arrays["actions"][1, 3] == int(dataset.steps["action"][row])


def test_a_loaded_dataset_can_be_written_elsewhere(tmp_path):
    loaded = load_episodes(write_episodes(synthetic([3, 2]), tmp_path / "a"))
    copy = load_episodes(write_episodes(loaded, tmp_path / "b"))
    assert str(tmp_path / "a") in loaded.steps["state"].filename  # the caller's dataset is left as it was
    assert torch.equal(copy.steps["state"], loaded.steps["state"])
    assert load_episodes(tmp_path / "a").num_steps == 5
