"""``imaginebench pipeline`` end to end on tiny data, and its resumption."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from imaginebench.collect import episode_seed
from imaginebench.datasets import load_episodes
from imaginebench.datasets.episodes import episode_row_ranges
from imaginebench.levels import IMAGINED_LEVELS
from imaginebench.processes import CORES_VARIABLE
from imaginebench.registry import get_domain, make
from imaginebench.shipped import shipped_model
from tests.grounding_fixtures import TINY
from tests.test_cli_errors import error_line
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


def run_pipeline(
    tmp_path: Path,
    *fit_args: str,
    env_id: str = "BabyAI-v0",
    real_episodes: int = 24,
    rollouts: int = 4,
    grounding_config: Path | None = None,
    fit_config: Path | None = None,
) -> str:
    command = [
        sys.executable,
        "-m",
        "imaginebench",
        "pipeline",
        "--env",
        env_id,
        "--out",
        str(tmp_path / "out"),
        "--real-episodes",
        str(real_episodes),
        "--rollouts",
        str(rollouts),
        "--grounding-config",
        str(grounding_config or tiny_grounding_config(tmp_path)),
        "--lightning-args",
        "--config",
        str(fit_config or tiny_config(tmp_path)),
        "--data.imaginary_filter",
        "[]",
        *fit_args,
    ]
    environment = {**os.environ, "IMAGINEBENCH_DATA": str(tmp_path / "data"), CORES_VARIABLE: "1"}
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
    shipped_read = shipped_model("BabyAI-v0").next_states  # imagined as the env's shipped data are
    assert {
        load_episodes(out / f"imaginary-{level}").metadata["generator"]["next_states"] for level in IMAGINED_LEVELS
    } == {shipped_read}
    assert f"next states from the {shipped_read}" in stdout
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

    costs = json.loads((out / "stage_costs.json").read_text())
    stages = ["collect", "ground", "imagine rephrase", "imagine easy", "imagine hard", "rollout quality", "fit bc"]
    assert costs["env_id"] == "BabyAI-v0" and list(costs["stages"]) == stages
    assert all(record["cpu_s"] > 0 and record["wall_s"] > 0 for record in costs["stages"].values())
    assert costs["stages"]["collect"]["work"] == "24 episodes, workers: 1"
    assert "cost of each stage" in stdout and "imagine hard" in stdout.split("cost of each stage")[1]

    again = run_pipeline(tmp_path)
    kept = json.loads((out / "stage_costs.json").read_text())["stages"]
    assert all(kept[stage] == costs["stages"][stage] for stage in stages[:5])  # kept outputs keep their costs
    fit, fit_before = kept["fit bc"], costs["stages"]["fit bc"]
    assert fit["work"] == fit_before["work"] and fit["cpu_s"] > fit_before["cpu_s"]  # the resume adds its cost
    assert "[pipeline 1/6] collect:" in again and "exists, kept" in again.split("[pipeline 4/6]")[0]
    assert again.count("exists, kept") == 5  # real data, checkpoint, three imaginary datasets
    assert (
        json.loads((out / "bc-real+imaginary" / "run" / "results.json").read_text()) == results
    )  # fit resumed its finished run


def shrunk_grounding_config(tmp_path: Path, env_id: str) -> Path:
    """The env's own grounding config (window, state head, real data) with a tiny backbone, batch and budget."""
    path = REPO / get_domain(env_id).grounding_config
    config = yaml.safe_load(path.read_text())
    tiny = yaml.safe_load(tiny_grounding_config(tmp_path).read_text())
    config["trainer"] = tiny["trainer"]
    config["data"].update({**tiny["data"], "env_id": env_id, "max_episodes": None})
    config["model"].update({**TINY, "backbone": None, "explanation_eval_rollouts": 2})
    shrunk = tmp_path / f"grounding-{env_id}.yaml"
    shrunk.write_text(yaml.safe_dump(config))
    return shrunk


def tiny_fit_config(tmp_path: Path) -> Path:
    """One short epoch, evaluated once on one episode of each easy task (the simulators are the cost here)."""
    config = yaml.safe_load(tiny_config(tmp_path).read_text())
    config["trainer"]["max_epochs"] = 1
    config["trainer"]["callbacks"][0]["init_args"] = {"levels": ["easy"], "episodes_per_task": 1}
    config["data"].update({"batches_per_epoch": 4})
    path = tmp_path / "tiny-fit.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def check_imaginary_dataset(path: Path, env_id: str, level: str, rollouts: int) -> None:
    """Full-rate episodes of the level's tasks from the env's own resets, rewarded by its ``imagined_rewards``."""
    domain, dataset = get_domain(env_id), load_episodes(path)
    assert {k: dataset.metadata[k] for k in ("env_id", "level", "source", "state_dim")} == {
        "env_id": env_id,
        "level": level,
        "source": "imaginary",
        "state_dim": domain.state_dim,
    }
    assert dataset.num_episodes == rollouts and set(dataset.tasks) <= set(domain.tasks[level])
    steps = dataset.steps
    assert steps["state"].shape[1:] == (domain.state_dim,) and steps["action"].shape[1:] == (domain.action_dim,)
    env = make(env_id, level)
    for start, end in episode_row_ranges(steps):
        episode = {key: steps[key][start:end].numpy() for key in ("state", "next_state", "action", "reward", "success")}
        first = steps[start]
        observation, _ = env.reset(
            seed=episode_seed(0, int(first["episode_id"])), options={"task": dataset.tasks[int(first["task_id"])]}
        )
        length = end - start
        assert steps["step"][start:end].tolist() == list(range(length))  # one row per env step
        np.testing.assert_array_equal(episode["state"][1:], episode["next_state"][:-1])
        np.testing.assert_allclose(episode["state"][0], observation["state"], atol=1e-6)
        assert length == env.horizon or episode["success"][-1]  # a rollout runs until its goal or the horizon
        states = np.concatenate([episode["state"], episode["next_state"][-1:]])
        success = np.concatenate([env.success_flags(states[:1]), episode["success"]])
        np.testing.assert_allclose(episode["reward"], env.imagined_rewards(states, episode["action"], success))
    env.close()


@pytest.mark.parametrize("env_id", ["Mujoco-v0", "MetaWorld-v0"])
def test_a_continuous_env_pipeline_imagines_full_rate_rollouts_of_every_novel_level_then_resumes(tmp_path, env_id):
    """Its own grounding config, shrunk: windows slide over horizons of 100-200 steps (~40 s for Mujoco-v0,
    ~70 s for MetaWorld-v0 on one thread)."""
    options = {
        "env_id": env_id,
        "real_episodes": 8,
        "rollouts": 2,
        "grounding_config": shrunk_grounding_config(tmp_path, env_id),
        "fit_config": tiny_fit_config(tmp_path),
    }
    stdout = run_pipeline(tmp_path, **options)
    out = tmp_path / "out"
    assert all(f"[pipeline {number}/6]" in stdout for number in range(1, 7))
    window = yaml.safe_load(options["grounding_config"].read_text())["data"]["window_steps"]
    for level in IMAGINED_LEVELS:
        check_imaginary_dataset(out / f"imaginary-{level}", env_id, level, rollouts=2)
        assert load_episodes(out / f"imaginary-{level}").metadata["generator"]["model"]["window_steps"] == window
    quality = json.loads((out / "quality.json").read_text())
    assert [report["level"] for report in quality] == list(IMAGINED_LEVELS)
    results = json.loads((out / "bc-real+imaginary" / "run" / "results.json").read_text())
    assert list(results["levels"]) == ["easy"]
    made = {path: path.stat().st_mtime_ns for path in (out / "grounding.ckpt", *out.glob("imaginary-*/metadata.json"))}

    again = run_pipeline(tmp_path, **options)
    assert again.count("exists, kept") == 5  # real data, checkpoint, three imaginary datasets
    assert {path: path.stat().st_mtime_ns for path in made} == made
    assert json.loads((out / "bc-real+imaginary" / "run" / "results.json").read_text()) == results


def test_without_the_libero_extra_the_pipeline_names_it_in_one_line_before_any_work(tmp_path, capsys):
    if importlib.util.find_spec("libero") is not None:
        pytest.skip("the LIBERO extra is installed")
    line = error_line(["pipeline", "--env", "Libero-v0", "--out", str(tmp_path / "out")], capsys)
    assert line.startswith("imaginebench pipeline: --env: Libero-v0 needs the LIBERO extra: pip install -e .[libero]")
    assert not (tmp_path / "out").exists()
