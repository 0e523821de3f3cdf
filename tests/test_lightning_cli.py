"""The main job's path through LightningCLI, shrunk to tiny data and few steps."""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import yaml

from imaginebench.commands.imagine import imagine
from imaginebench.datasets.locations import default_dataset_dir
from imaginebench.levels import IMAGINED_LEVELS
from tests.shipped_fixtures import TINY_SETTINGS

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def tiny_imaginary_data_root(tmp_path, shipped_tiny_model, monkeypatch) -> Path:
    """The BabyAI configs mix in the imaginary rollouts of the novel levels: made here by the tiny
    model into a temporary data root that the ``fit`` subprocesses inherit, so they never imagine
    with the real shipped model nor write into the repository's ``data/``. The checkpoint is a copy
    under another name: data of a checkpoint of one's own are used as found, while data of a
    shipped model other than ``assets/`` holds (the subprocesses see the real one) would be imagined anew."""
    root = tmp_path / "data-root"
    monkeypatch.setenv("IMAGINEBENCH_DATA", str(root))
    own = tmp_path / "tiny-grounding.ckpt"
    shutil.copyfile(shipped_tiny_model / "BabyAI-v0" / "grounding.ckpt", own)
    for level in IMAGINED_LEVELS:
        imagine(
            own, "BabyAI-v0", level, TINY_SETTINGS["rollouts"], default_dataset_dir("BabyAI-v0", "imaginary", level)
        )
    return root


def tiny_config(tmp_path: Path, *extra_callbacks: dict) -> Path:
    config = {
        "trainer": {
            "max_epochs": 2,
            "log_every_n_steps": 3,
            "enable_progress_bar": False,
            "logger": {
                "class_path": "lightning.pytorch.loggers.TensorBoardLogger",
                "init_args": {"save_dir": str(tmp_path / "runs"), "name": "tiny"},
            },
            "callbacks": [
                {
                    "class_path": "callbacks.evaluation.SuccessRateEvaluation",
                    "init_args": {"episodes_per_task": 2, "every_n_epochs": 1},
                },
                {"class_path": "lightning.pytorch.callbacks.ModelCheckpoint", "init_args": {"save_last": True}},
                *extra_callbacks,
            ],
        },
        "data": {
            "collect_if_missing": 24,
            "batch_size": 16,
            "batches_per_epoch": 6,
            "evaluation_batches": 1,
            "imaginary_filter": [],
        },  # the tiny shipped model's rollouts never reach a goal
    }
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def imaginebench(*args: str) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [sys.executable, "-m", "imaginebench", *args], cwd=REPO, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]
    return result


@pytest.mark.parametrize("algo", ["bc", "discrete_cql", "discrete_bcq", "iql"])
def test_fit_collects_missing_data_trains_and_evaluates_every_level(tmp_path, tiny_imaginary_data_root, algo):
    result = imaginebench(
        "fit", "--config", f"lightning_config/babyai/{algo}.yaml", "--config", str(tiny_config(tmp_path))
    )
    assert (
        tiny_imaginary_data_root / "BabyAI-v0" / "real-train" / "metadata.json"
    ).is_file()  # data.real_levels [train]
    run_dir = tmp_path / "runs" / "tiny" / f"{algo}-seed0"
    report = json.loads((run_dir / "results.json").read_text())
    assert list(report["levels"]) == ["train", "rephrase", "easy", "hard"]
    assert report["global_step"] == 12 and len(report["history"]) == 2
    assert set(report["levels"]["easy"]["per_task"]) == {"OpenGo", "OpenPick", "GoWall", "GoCenter"}
    assert all(task["episodes"] == 2 for task in report["levels"]["hard"]["per_task"].values())
    assert "Success per level" in result.stdout and "PutPile" in result.stdout
    warned = [line for line in result.stderr.splitlines() if re.search(r"\.py:\d+: ", line)]
    assert warned == [], warned  # every warning a run printed was read: known harmless ones are silenced
    assert (run_dir / "success_rate.png").stat().st_size > 0
    assert any(p.name.startswith("events.out.tfevents") for p in run_dir.iterdir())

    checkpoint = run_dir / "checkpoints" / "last.ckpt"
    validated = imaginebench(
        "validate",
        "--config",
        f"lightning_config/babyai/{algo}.yaml",
        "--config",
        str(tiny_config(tmp_path)),
        "--ckpt_path",
        str(checkpoint),
    )
    assert "val/" in validated.stdout
    assert json.loads((run_dir / "validate" / "results.json").read_text())["levels"]["hard"]["per_task"]


def test_ddp_on_two_cpu_processes_trains_with_distinct_batch_streams(tmp_path):
    probe = {"class_path": "tests.ddp_probe.FirstBatchProbe", "init_args": {"out_dir": str(tmp_path / "probe")}}
    imaginebench(
        "fit",
        "--config",
        "lightning_config/babyai/bc.yaml",
        "--config",
        str(tiny_config(tmp_path, probe)),
        "--trainer.strategy",
        "ddp",
        "--trainer.accelerator",
        "cpu",
        "--trainer.devices",
        "2",
    )
    rank0, rank1 = (torch.load(tmp_path / "probe" / f"rank{r}.pt") for r in (0, 1))
    assert rank0["world_size"] == rank1["world_size"] == 2
    assert not torch.equal(rank0["state"], rank1["state"])
    report = json.loads((tmp_path / "runs" / "tiny" / "bc-seed0" / "results.json").read_text())
    assert report["global_step"] == 12 and list(report["levels"]) == ["train", "rephrase", "easy", "hard"]
