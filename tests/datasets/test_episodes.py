import json

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from imaginebench.datasets import (
    DatasetError,
    concat_datasets,
    load_episodes,
    to_transitions,
    with_instruction_embeddings,
    write_episodes,
)
from imaginebench.datasets.legacy import to_padded_arrays
from tests.synthetic_episodes import synthetic_dataset as synthetic


def test_round_trip_preserves_every_field(tmp_path):
    original = synthetic("real", [3, 5, 2])
    loaded = load_episodes(write_episodes(original, tmp_path / "ds"))
    for key in original.steps.keys():
        assert torch.equal(loaded.steps[key], original.steps[key]), key
    assert torch.equal(loaded.instruction_embeddings, original.instruction_embeddings)
    assert loaded.instruction_texts == original.instruction_texts
    assert loaded.num_episodes == 3 and loaded.num_steps == 10
    assert loaded.metadata["counts"]["per_task"] == {
        "goto": {"episodes": 2, "successes": 2},
        "pickup": {"episodes": 1, "successes": 1},
    }


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(1, 6), min_size=1, max_size=6), st.lists(st.integers(1, 6), min_size=1, max_size=6))
def test_concat_keeps_episodes_whole_and_embeddings_attached(lengths_a, lengths_b):
    a, b = synthetic("real", lengths_a, seed=1), synthetic("real", lengths_b, seed=2)
    b.instruction_texts = [f"other {i}" for i in range(3)]
    merged = concat_datasets([a, b])
    assert merged.num_episodes == len(lengths_a) + len(lengths_b)
    # each row's embedding is the one its own dataset assigned to it
    expected = torch.cat(
        [a.instruction_embeddings[a.steps["instruction_id"]], b.instruction_embeddings[b.steps["instruction_id"]]]
    )
    assert torch.equal(merged.instruction_embeddings[merged.steps["instruction_id"]], expected)
    assert torch.equal(merged.steps["state"], torch.cat([a.steps["state"], b.steps["state"]]))


def test_missing_metadata_field_names_file_and_field(tmp_path):
    path = write_episodes(synthetic("real", [2, 2]), tmp_path / "ds")
    meta = json.loads((path / "metadata.json").read_text())
    del meta["encoder_id"]
    (path / "metadata.json").write_text(json.dumps(meta))
    with pytest.raises(DatasetError, match=r"metadata\.json: field 'encoder_id' is missing"):
        load_episodes(path)


def test_nan_state_is_rejected_naming_the_field(tmp_path):
    dataset = synthetic("real", [2, 2])
    dataset.steps["state"][1, 2] = float("nan")
    with pytest.raises(DatasetError, match=r"field 'state' contains NaN"):
        write_episodes(dataset, tmp_path / "ds")
    assert not (tmp_path / "ds").exists()


def test_wrong_dtype_and_broken_episode_order_are_rejected(tmp_path):
    dataset = synthetic("real", [3])
    dataset.steps["reward"] = dataset.steps["reward"].double()
    with pytest.raises(DatasetError, match=r"field 'reward' has dtype torch.float64"):
        write_episodes(dataset, tmp_path / "a")
    dataset = synthetic("real", [3])
    dataset.steps["step"] = torch.tensor([0, 2, 1])
    with pytest.raises(DatasetError, match=r"field 'step'"):
        write_episodes(dataset, tmp_path / "b")


def test_truncated_tensor_file_is_an_error_naming_the_directory(tmp_path):
    path = write_episodes(synthetic("real", [4]), tmp_path / "ds")
    (path / "instructions.json").write_text("[")
    with pytest.raises(DatasetError, match="instructions.json: invalid JSON"):
        load_episodes(path)


def test_failed_write_leaves_existing_dataset_intact(tmp_path):
    path = write_episodes(synthetic("real", [2, 3]), tmp_path / "ds")
    bad = synthetic("real", [4])
    bad.steps["action"][0] = 99
    with pytest.raises(DatasetError):
        write_episodes(bad, path)
    assert load_episodes(path).num_steps == 5
    assert [p.name for p in tmp_path.iterdir()] == ["ds"]


def test_transitions_bootstrap_through_truncation_only():
    dataset = synthetic("real", [2, 3])
    dataset.steps["truncated"][1] = True
    dataset.steps["terminated"][1] = False
    transitions = to_transitions(dataset)
    td = with_instruction_embeddings(transitions.rows, transitions.instruction_embeddings)
    assert td["next", "done"][:, 0].tolist() == [False, True, False, False, True]
    assert td["next", "terminated"][:, 0].tolist() == [False, False, False, False, True]
    expected = dataset.instruction_embeddings[dataset.steps["instruction_id"]]
    assert torch.equal(td["instruction_embedding"], expected) and torch.equal(
        td["next", "instruction_embedding"], expected
    )
    assert "instruction_id" not in td.keys()


def test_padded_arrays_match_the_original_layout():
    dataset = synthetic("real", [2, 4], state_dim=3, embedding_dim=4)
    arrays = to_padded_arrays(dataset)
    assert arrays["observations"].shape == (2, 4, 7)
    assert arrays["rewards"].shape == (2, 4, 1) and arrays["masks"].shape == (2, 4, 1)
    assert arrays["masks"][:, :, 0].tolist() == [[1, 1, 0, 0], [1, 1, 1, 1]]
    # state of episode 1, step 3, followed by its instruction embedding
    row = int(np.flatnonzero((dataset.steps["episode_id"] == 1) & (dataset.steps["step"] == 3))[0])
    expected = torch.cat(
        [dataset.steps["state"][row], dataset.instruction_embeddings[dataset.steps["instruction_id"][row]]]
    )
    np.testing.assert_array_equal(arrays["observations"][1, 3], expected.numpy())
    assert arrays["actions"][1, 3] == int(dataset.steps["action"][row])


def test_a_loaded_dataset_can_be_written_elsewhere(tmp_path):
    loaded = load_episodes(write_episodes(synthetic("real", [3, 2]), tmp_path / "a"))
    copy = load_episodes(write_episodes(loaded, tmp_path / "b"))
    assert str(tmp_path / "a") in loaded.steps["state"].filename  # the caller's dataset is left as it was
    assert torch.equal(copy.steps["state"], loaded.steps["state"])
    assert load_episodes(tmp_path / "a").num_steps == 5
