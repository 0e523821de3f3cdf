"""Datasets on disk are never changed by reading them, and damage is an error, not zeros."""

import os
import stat

import pytest
import torch

from imaginebench import storage
from imaginebench.datasets import DatasetError, load_episodes, write_episodes
from tests.synthetic_episodes import synthetic_dataset as synthetic


def _file_bytes(path):
    return {p.relative_to(path): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def test_a_truncated_tensor_file_is_refused_and_left_as_it_is(tmp_path):
    path = write_episodes(synthetic("real", [50] * 4), tmp_path / "ds")
    state_file = path / "tensors" / "steps" / "state.memmap"
    os.truncate(state_file, 100)
    with pytest.raises(DatasetError, match="tensors"):
        load_episodes(path)
    assert state_file.stat().st_size == 100  # not zero-extended back to full size


def test_writes_to_a_loaded_dataset_stay_in_memory(tmp_path):
    path = write_episodes(synthetic("real", [3, 4]), tmp_path / "ds")
    before = _file_bytes(path)
    loaded = load_episodes(path)
    loaded.steps["state"].sub_(100)
    loaded.steps["action"].zero_()
    loaded.instruction_embeddings.mul_(0)
    assert float(loaded.steps["state"][0, 1]) == -100.0  # the change is visible to the one who made it
    del loaded
    assert _file_bytes(path) == before
    assert float(load_episodes(path).steps["state"][0, 1]) == 0.0


def test_step_count_must_match_the_metadata(tmp_path):
    path = write_episodes(synthetic("real", [3, 4]), tmp_path / "ds")
    meta_file = path / "metadata.json"
    meta_file.write_text(meta_file.read_text().replace('"steps": 7', '"steps": 9'))
    with pytest.raises(DatasetError, match="holds 7 steps but .*metadata.json counts 9"):
        load_episodes(path)


@pytest.mark.parametrize("flag", ["terminated", "truncated"])
def test_an_end_flag_in_the_middle_of_an_episode_is_refused(tmp_path, flag):
    dataset = synthetic("real", [3, 4])
    dataset.steps[flag][4] = True  # row 4 is the second row of episode 1
    with pytest.raises(DatasetError, match=f"'{flag}' is set on row 4, which is not the last row"):
        write_episodes(dataset, tmp_path / "ds")


def test_merged_episodes_are_refused(tmp_path):
    dataset = synthetic("real", [3, 4])
    dataset.steps["episode_id"][3:] = 0
    dataset.steps["step"][3:] = torch.arange(3, 7)  # two episodes relabelled as one
    with pytest.raises(DatasetError, match="'terminated' is set on row 2"):
        write_episodes(dataset, tmp_path / "ds")


def test_a_cut_off_episode_is_refused(tmp_path):
    dataset = synthetic("real", [3, 4])
    dataset.steps["terminated"][-1] = False
    with pytest.raises(DatasetError, match="both unset on row 6"):
        write_episodes(dataset, tmp_path / "ds")


def test_datasets_get_the_users_normal_permissions(tmp_path):
    old_mask = os.umask(0o022)
    try:
        path = write_episodes(synthetic("real", [2]), tmp_path / "ds")
    finally:
        os.umask(old_mask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o755
    assert stat.S_IMODE((path / "metadata.json").stat().st_mode) == 0o644


def test_writing_refuses_to_replace_without_overwrite_and_never_replaces_a_non_dataset(tmp_path):
    path = write_episodes(synthetic("real", [2]), tmp_path / "ds")
    with pytest.raises(DatasetError, match="--overwrite"):
        write_episodes(synthetic("real", [3]), path)
    assert load_episodes(path).num_steps == 2
    write_episodes(synthetic("real", [3]), path, overwrite=True)
    assert load_episodes(path).num_steps == 3
    project = tmp_path / "myproject"
    (project / "src").mkdir(parents=True)
    (project / "src" / "main.py").write_text("print('precious')")
    with pytest.raises(DatasetError, match="not a dataset directory"):
        write_episodes(synthetic("real", [2]), project, overwrite=True)
    assert (project / "src" / "main.py").read_text() == "print('precious')"


def test_stale_temporary_directories_are_removed_and_an_interrupted_replace_is_undone(tmp_path):
    path = write_episodes(synthetic("real", [2]), tmp_path / "ds")
    (tmp_path / ".ds.tmp-abc").mkdir()  # a writer killed before its rename
    aside = tmp_path / ".ds.old-xyz"  # a writer killed between moving the old dataset aside and renaming in the new one
    aside.mkdir()
    os.replace(path, aside / "ds")
    storage.remove_stale_siblings(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds"]
    assert load_episodes(path).num_steps == 2
