"""``imaginebench pipeline`` end to end on tiny data, and its resumption."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

from tests.grounding_fixtures import TINY
from tests.test_lightning_cli import REPO, tiny_config


def tiny_grounding_config(tmp_path: Path) -> Path:
    config = {
        "trainer": {
            "max_steps": 4,
            "enable_progress_bar": False,
            "limit_val_batches": 1,
            "num_sanity_val_steps": 0,
            "logger": {
                "class_path": "lightning.pytorch.loggers.TensorBoardLogger",
                "init_args": {"save_dir": "unused"},
            },
            "callbacks": [
                {"class_path": "lightning.pytorch.callbacks.ModelCheckpoint", "init_args": {"save_last": True}}
            ],
        },
        "data": {"env_id": "BabyAI-v0", "batch_size": 4, "batches_per_epoch": 2, "val_fraction": 0.2, "val_batches": 1},
        "model": {**TINY, "round_states": True, "explanation_eval_rollouts": 2},
    }
    path = tmp_path / "grounding.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def run_pipeline(tmp_path: Path, *fit_args: str) -> str:
    command = [
        sys.executable,
        "-m",
        "imaginebench",
        "pipeline",
        "--env",
        "BabyAI-v0",
        "--out",
        str(tmp_path / "out"),
        "--real-episodes",
        "24",
        "--rollouts",
        "4",
        "--grounding-config",
        str(tiny_grounding_config(tmp_path)),
        "--lightning-args",
        "--config",
        str(tiny_config(tmp_path)),
        "--data.imaginary_filter",
        "[]",
        *fit_args,
    ]
    environment = {**os.environ, "IMAGINEBENCH_DATA": str(tmp_path / "data")}
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=900, env=environment)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]
    return result.stdout


def test_pipeline_runs_every_stage_then_resumes_from_its_outputs(tmp_path):
    stdout = run_pipeline(tmp_path)
    out = tmp_path / "out"
    for number in range(1, 7):
        assert f"[pipeline {number}/6]" in stdout
    assert (tmp_path / "data" / "BabyAI-v0" / "real-train" / "metadata.json").is_file()
    assert (out / "grounding.ckpt").is_file()
    quality = json.loads((out / "quality.json").read_text())
    assert [report["level"] for report in quality] == ["rephrase", "easy", "hard"]
    assert all(report["overall"]["rollouts"] == 4 for report in quality)
    summaries = [summary for report in quality for summary in (report["overall"], *report["per_task"].values())]
    assert all(
        isinstance(s["one_step_error_rate"], float) and isinstance(s["drift_error_rate"], float) for s in summaries
    )
    assert "one-step" in stdout and "drift" in stdout
    results = json.loads((out / "bc-real+imaginary" / "run" / "results.json").read_text())
    assert list(results["levels"]) == ["train", "rephrase", "easy", "hard"]
    config = yaml.safe_load((out / "bc-real+imaginary" / "run" / "config.yaml").read_text())
    assert config["data"]["imaginary"] == [str(out / f"imaginary-{level}") for level in ("rephrase", "easy", "hard")]
    assert config["data"]["imaginary_levels"] == []  # its own rollouts replace the config's default (shipped) ones
    assert (
        config["data"]["mix_ratio_real"] == 0.5 and config["data"]["imaginary_filter"] == []
    )  # a 4-step model reaches no goal

    again = run_pipeline(tmp_path)
    assert "[pipeline 1/6] collect:" in again and "exists, kept" in again.split("[pipeline 4/6]")[0]
    assert again.count("exists, kept") == 5  # real data, checkpoint, three imaginary datasets
    assert (
        json.loads((out / "bc-real+imaginary" / "run" / "results.json").read_text()) == results
    )  # fit resumed its finished run
