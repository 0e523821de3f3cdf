import subprocess
import sys

import pytest
import torch

import imaginebench.collect as collect_module
from imaginebench.collect import collect
from imaginebench.datasets import load_episodes
from imaginebench.errors import UserInputError


def test_collect_is_deterministic_and_balanced_over_tasks(tmp_path):
    a = load_episodes(collect("BabyAI-v0", "train", 8, tmp_path / "a", seed=3, progress=False))
    b = load_episodes(collect("BabyAI-v0", "real", 8, tmp_path / "b", seed=3, shard_episodes=3, progress=False))
    assert a.num_episodes == 8 and a.metadata["source"] == "real" and a.metadata["level"] == "train"
    for key in a.steps.keys():
        assert torch.equal(a.steps[key], b.steps[key]), key
    assert a.instruction_texts == b.instruction_texts
    assert {task: c["episodes"] for task, c in a.metadata["counts"]["per_task"].items()} == {t: 2 for t in a.tasks}
    c = load_episodes(collect("BabyAI-v0", "train", 8, tmp_path / "c", seed=4, progress=False))
    assert not torch.equal(a.steps["state"][:5], c.steps["state"][:5])


def test_interrupted_collect_resumes_to_the_same_dataset(tmp_path, monkeypatch):
    reference = load_episodes(
        collect("BabyAI-v0", "easy", 6, tmp_path / "ref", seed=1, shard_episodes=2, progress=False)
    )
    real_run = collect_module.run_expert_episodes
    calls = []

    def crash_on_second_shard(*args, **kwargs):
        calls.append(args[2])
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real_run(*args, **kwargs)

    monkeypatch.setattr(collect_module, "run_expert_episodes", crash_on_second_shard)
    with pytest.raises(KeyboardInterrupt):
        collect("BabyAI-v0", "easy", 6, tmp_path / "out", seed=1, shard_episodes=2, progress=False)
    assert not (tmp_path / "out").exists()  # no half dataset under the final name
    monkeypatch.setattr(collect_module, "run_expert_episodes", real_run)
    resumed = load_episodes(collect("BabyAI-v0", "easy", 6, tmp_path / "out", seed=1, shard_episodes=2, progress=False))
    for key in reference.steps.keys():
        assert torch.equal(reference.steps[key], resumed.steps[key]), key
    assert not (tmp_path / ".out.partial").exists()


def test_collect_refuses_to_overwrite_and_rejects_bad_arguments(tmp_path):
    collect("BabyAI-v0", "hard", 3, tmp_path / "ds", progress=False)
    with pytest.raises(UserInputError, match="--overwrite"):
        collect("BabyAI-v0", "hard", 3, tmp_path / "ds", progress=False)
    with pytest.raises(ValueError, match="valid env ids: BabyAI-v0"):
        collect("Nope-v0", "train", 3, tmp_path / "x", progress=False)
    with pytest.raises(ValueError, match="valid levels: train, rephrase, easy, hard, real"):
        collect("BabyAI-v0", "medium", 3, tmp_path / "x", progress=False)


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "imaginebench", *args], capture_output=True, text=True, timeout=300)


def test_help_lists_every_subcommand():
    result = run_cli("--help")
    assert result.returncode == 0
    for command in ("fit", "validate", "test", "collect"):
        assert f"\n  {command} " in result.stdout


def test_collect_command_writes_a_dataset_and_reports_success(tmp_path):
    result = run_cli(
        "collect",
        "--env",
        "BabyAI-v0",
        "--level",
        "train",
        "--episodes",
        "4",
        "--out",
        str(tmp_path / "ds"),
        "--seed",
        "2",
    )
    assert result.returncode == 0, result.stderr
    assert "wrote 4 episodes" in result.stdout and "PutNext" in result.stdout
    assert load_episodes(tmp_path / "ds").metadata["produced_by"]["config"]["seed"] == 2
    again = run_cli("collect", "--env", "BabyAI-v0", "--episodes", "4", "--out", str(tmp_path / "ds"))
    assert again.returncode != 0 and "already exists" in again.stderr
