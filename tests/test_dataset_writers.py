"""One writer per output: `collect`/`imagine` runs never mix into, or delete, what is not theirs."""

import os
import subprocess
import sys
import threading
import time

import pytest

from imaginebench.collect import collect
from imaginebench.commands.imagine import imagine
from imaginebench.datasets import DatasetError, load_episodes
from imaginebench.locks import LockedError
from imaginebench.storage import atomic_directory

HOLD_LOCK = """
import sys, time
from imaginebench.locks import exclusive_lock
with exclusive_lock(sys.argv[1]):
    print("holding", flush=True)
    time.sleep(float(sys.argv[2]))
"""


def hold_lock(path, seconds: float) -> subprocess.Popen:
    """Another process that writes ``path`` (holds its lock) for ``seconds``."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(path), str(seconds)], stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout.readline().strip() == "holding"
    return holder


def test_a_second_collect_into_the_same_out_fails_naming_the_first(tmp_path):
    out = tmp_path / "real-train"
    holder = hold_lock(out, 30)
    try:
        with pytest.raises(LockedError, match=rf"being written by pid {holder.pid} .*lock {tmp_path}/.real-train.lock"):
            collect("BabyAI-v0", "train", 2, out, seed=1, progress=False)
    finally:
        holder.kill()
        holder.wait()
    assert not out.exists() and not (tmp_path / ".real-train.partial").exists()  # the refused run wrote nothing


def test_collection_on_first_use_waits_for_the_writer_and_uses_its_dataset(tmp_path):
    out = tmp_path / "real-train"
    holder = hold_lock(out, 1.5)
    result = {}

    def first_use() -> None:  # what a second `fit` does while the first collects the default data
        result["path"] = collect("BabyAI-v0", "train", 2, out, seed=1, progress=False, wait=True)

    waiter = threading.Thread(target=first_use)
    waiter.start()
    time.sleep(0.5)
    collect("BabyAI-v0", "train", 2, tmp_path / "elsewhere", seed=0, progress=False)
    os.replace(tmp_path / "elsewhere", out)  # the holder's dataset appears before it lets go
    holder.wait()
    waiter.join(timeout=120)
    assert result["path"] == out
    assert load_episodes(out).metadata["produced_by"]["config"]["seed"] == 0  # the holder's data, not overwritten


def test_a_directory_that_appears_during_a_write_is_not_replaced(tmp_path):
    target = tmp_path / "ds"
    with pytest.raises(FileExistsError):
        with atomic_directory(target, replace=False) as tmp:
            (tmp / "new").write_text("new")
            target.mkdir()
            (target / "theirs").write_text("theirs")
    assert [p.name for p in target.iterdir()] == ["theirs"]
    assert [p.name for p in tmp_path.iterdir()] == ["ds"]


def test_overwrite_replaces_a_dataset_but_never_a_project_folder(tmp_path):
    project = tmp_path / "myproject"
    (project / "src").mkdir(parents=True)
    (project / "src" / "train.py").write_text("precious")
    with pytest.raises(ValueError, match="myproject is not a dataset directory.*refusing to replace it"):
        collect("BabyAI-v0", "train", 2, project, progress=False, overwrite=True)
    assert (project / "src" / "train.py").read_text() == "precious"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".myproject.lock", "myproject"]  # nothing collected beside it
    out = collect("BabyAI-v0", "train", 2, tmp_path / "ds", seed=0, progress=False)
    collect("BabyAI-v0", "train", 3, out, seed=1, progress=False, overwrite=True)
    assert load_episodes(out).num_episodes == 3


def test_imagine_overwrite_never_replaces_a_project_folder(tmp_path, grounded_checkpoint):
    project = tmp_path / "myproject"
    project.mkdir()
    (project / "notes.txt").write_text("precious")
    with pytest.raises(ValueError, match="not a dataset directory"):
        imagine(grounded_checkpoint, "BabyAI-v0", "easy", 2, project, progress=False, overwrite=True)
    assert (project / "notes.txt").read_text() == "precious"


def test_leftovers_of_a_killed_run_are_removed_by_the_next(tmp_path):
    out = collect("BabyAI-v0", "train", 2, tmp_path / "ds", seed=0, progress=False)
    config = load_episodes(out).metadata["produced_by"]["config"]
    partial = tmp_path / ".ds.partial"  # the run was killed after its final rename, before removing this
    partial.mkdir()
    (partial / "config.json").write_text(__import__("json").dumps(config))
    (tmp_path / ".ds.tmp-x1").mkdir()  # killed inside a final write
    with pytest.raises(DatasetError, match="already exists"):
        collect("BabyAI-v0", "train", 2, out, seed=0, progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".ds.lock", "ds"]
