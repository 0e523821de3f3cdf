"""Every run has a named directory: ``--ckpt_path last`` resumes it, a fresh ``fit`` never writes over
it, and a checkpoint is loaded only into the algorithm that wrote it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
import yaml

from callbacks.cpu_time import CpuTime, checkpoint_cpu_s
from imaginebench.checkpoints import last_checkpoint
from imaginebench.collect import collect
from imaginebench.commands.lightning_cli import run_grounding_cli, run_lightning_cli
from imaginebench.datasets.locations import default_dataset_dir
from imaginebench.errors import UserInputError
from imaginebench.processes import process_cpu_s
from tests.test_lightning_cli import REPO
from tests.test_pipeline import tiny_grounding_config


@pytest.fixture
def tiny(tmp_path, monkeypatch) -> Path:
    """A config overlay: one epoch of 3 batches on 8 real episodes of the data root, evaluated on 1
    episode per train task, logged under ``tmp_path/runs/tiny``."""
    monkeypatch.setenv("IMAGINEBENCH_DATA", str(tmp_path / "data"))
    collect("BabyAI-v0", "train", 8, default_dataset_dir("BabyAI-v0", "real", "train"), progress=False)
    config = {
        "trainer": {
            "max_epochs": 1,
            "enable_progress_bar": False,
            "enable_model_summary": False,
            "logger": {
                "class_path": "lightning.pytorch.loggers.TensorBoardLogger",
                "init_args": {"save_dir": str(tmp_path / "runs"), "name": "tiny"},
            },
            "callbacks": [
                {
                    "class_path": "callbacks.evaluation.SuccessRateEvaluation",
                    "init_args": {"levels": ["train"], "episodes_per_task": 1},
                },
                {"class_path": "lightning.pytorch.callbacks.ModelCheckpoint", "init_args": {"save_last": True}},
            ],
        },
        "data": {
            "imaginary_levels": [],
            "mix_ratio_real": 1.0,
            "batch_size": 8,
            "batches_per_epoch": 3,
            "evaluation_batches": 1,
        },
    }
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def fit(algo: str, tiny: Path, *args: str) -> None:
    run_lightning_cli(
        ["fit", "--config", str(REPO / "lightning_config" / "babyai" / f"{algo}.yaml"), "--config", str(tiny), *args]
    )


def snapshot(directory: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(directory)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in directory.rglob("*")
        if p.is_file()
    }


def test_ckpt_path_last_resumes_the_run_in_its_own_directory(tiny, tmp_path):
    fit("bc", tiny)
    run_dir = tmp_path / "runs" / "tiny" / "bc-seed0"
    assert torch.load(run_dir / "checkpoints" / "last.ckpt", weights_only=False)["global_step"] == 3

    fit("bc", tiny, "--ckpt_path", "last", "--trainer.max_epochs", "2")
    assert [p.name for p in (tmp_path / "runs" / "tiny").iterdir()] == ["bc-seed0"]
    assert torch.load(run_dir / "checkpoints" / "last.ckpt", weights_only=False)["global_step"] == 6
    assert len(list(run_dir.glob("events.out.tfevents*"))) == 2  # both attempts log into the same TensorBoard run
    report = json.loads((run_dir / "results.json").read_text())
    assert [entry["global_step"] for entry in report["history"]] == [3, 6]

    run_lightning_cli(
        [
            "validate",
            "--config",
            str(REPO / "lightning_config/babyai/bc.yaml"),
            "--config",
            str(tiny),
            "--ckpt_path",
            "last",
        ]
    )
    assert list(json.loads((run_dir / "validate" / "results.json").read_text())["levels"]) == ["train"]
    assert json.loads((run_dir / "results.json").read_text()) == report  # the run's own results stay


def test_a_moved_run_resumes_from_its_newest_state_every_time(tiny, tmp_path):
    """A checkpoint names the folder it was written in; resumed in another, Lightning writes ``last-v1.ckpt``
    beside the old ``last.ckpt``, and the next resume must take the newer file."""
    fit("bc", tiny)
    moved = tmp_path / "runs" / "moved" / "bc-seed0"
    moved.parent.mkdir()
    (tmp_path / "runs" / "tiny" / "bc-seed0").rename(moved)
    elsewhere = ["--trainer.logger.init_args.name", "moved", "--ckpt_path", "last"]
    fit("bc", tiny, *elsewhere, "--trainer.max_epochs", "2")
    fit("bc", tiny, *elsewhere, "--trainer.max_epochs", "3")
    assert torch.load(last_checkpoint(moved), weights_only=False)["global_step"] == 9
    history = json.loads((moved / "results.json").read_text())["history"]
    assert [entry["global_step"] for entry in history] == [3, 6, 9]


def test_a_second_fresh_fit_is_refused_and_changes_nothing(tiny, tmp_path):
    fit("bc", tiny)
    runs = tmp_path / "runs"
    before = snapshot(runs)
    with pytest.raises(
        UserInputError,
        match=r"bc-seed0 already holds a run \(.*last.ckpt.*\): resume it with --ckpt_path last, or start a separate run with --run_name",
    ):
        fit("bc", tiny)
    assert snapshot(runs) == before
    fit("bc", tiny, "--run_name", "second")
    assert (runs / "tiny" / "second" / "checkpoints" / "last.ckpt").is_file()


def test_a_checkpoint_of_another_algorithm_is_refused_naming_both(tiny, tmp_path):
    fit("bc", tiny)
    bc_checkpoint = tmp_path / "runs" / "tiny" / "bc-seed0" / "checkpoints" / "last.ckpt"
    with pytest.raises(
        UserInputError,
        match=rf"--ckpt_path {bc_checkpoint} was written by modules.bc.BC; this config trains modules.discrete_cql.DiscreteCQL",
    ):
        fit("discrete_cql", tiny, "--ckpt_path", str(bc_checkpoint))
    with pytest.raises(
        UserInputError,
        match=r"was written by modules.bc.BC; this config trains modules.grounding.model.GroundingModule",
    ):
        run_grounding_cli(["--config", str(tiny_grounding_config(tmp_path)), "--ckpt_path", str(bc_checkpoint)])
    assert not (tmp_path / "runs" / "tiny" / "discrete_cql-seed0").exists()


def test_ckpt_path_last_without_an_earlier_run_is_an_error(tiny, tmp_path):
    last = tmp_path / "runs" / "tiny" / "iql-seed3" / "checkpoints" / "last.ckpt"
    with pytest.raises(UserInputError, match=rf"--ckpt_path last: {last} does not exist"):
        fit("iql", tiny, "--ckpt_path", "last", "--seed_everything", "3")


def test_cpu_seconds_of_earlier_processes_travel_in_the_checkpoint(tiny, tmp_path):
    """A resumed run counts what its checkpoint had counted plus this process's CPU seconds (the 10⁶ seconds
    written into the checkpoint stand for earlier processes)."""
    with_cpu_time = ("--trainer.callbacks+=callbacks.cpu_time.CpuTime",)
    fit("bc", tiny, *with_cpu_time)
    last = tmp_path / "runs" / "tiny" / "bc-seed0" / "checkpoints" / "last.ckpt"
    checkpoint = torch.load(last, weights_only=False)
    assert 0 < checkpoint_cpu_s(checkpoint) < 10**6
    checkpoint["callbacks"][CpuTime.__qualname__]["cpu_s"] = 10**6
    torch.save(checkpoint, last)

    fit("bc", tiny, *with_cpu_time, "--ckpt_path", "last", "--trainer.max_epochs", "2")
    assert 10**6 < checkpoint_cpu_s(torch.load(last, weights_only=False)) <= 10**6 + process_cpu_s()
    assert checkpoint_cpu_s({"state_dict": {}}) is None  # a checkpoint written without the callback
