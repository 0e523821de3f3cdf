import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest
import torch

import imaginebench.collect as collect_module
from imaginebench.collect import collect, run_expert_episodes
from imaginebench.datasets import EpisodeDataset, load_episodes
from imaginebench.datasets.compare import dataset_differences
from imaginebench.datasets.shard_pool import ShardFailedError
from imaginebench.datasets.sharded import write_sharded
from imaginebench.errors import UserInputError
from imaginebench.instructions import DEFAULT_ENCODER


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


@pytest.fixture(scope="module")
def one_worker_run(tmp_path_factory) -> EpisodeDataset:
    """8 BabyAI train episodes (seed 3) in 4 shards, collected in this process: what any worker count must write."""
    out = tmp_path_factory.mktemp("one-worker") / "ds"
    return load_episodes(collect("BabyAI-v0", "train", 8, out, seed=3, shard_episodes=2, progress=False, workers=1))


def test_collect_in_two_workers_writes_the_one_worker_dataset(one_worker_run, tmp_path):
    two = collect("BabyAI-v0", "train", 8, tmp_path / "two", seed=3, shard_episodes=2, progress=False, workers=2)
    assert dataset_differences(one_worker_run, load_episodes(two)) == []
    assert "workers" not in load_episodes(two).metadata["produced_by"]["config"]


def logged_expert_episodes(log: Path, failing_start: int | None, indices: range) -> EpisodeDataset:
    """The episodes of a BabyAI train run (seed 3) that records each shard it makes in ``log`` and
    fails on the shard starting at ``failing_start``; module-level, so worker processes can run it."""
    log.mkdir(exist_ok=True)
    (log / str(indices.start)).touch()
    if indices.start == failing_start:
        raise RuntimeError("expert crashed")
    return run_expert_episodes("BabyAI-v0", "train", indices, 3, DEFAULT_ENCODER, "mean")


def test_a_failed_parallel_run_names_the_shard_and_resumes_without_redoing_finished_shards(one_worker_run, tmp_path):
    config = one_worker_run.metadata["produced_by"]["config"]  # that collect run's, so its resume is tested too
    out, partial_dir = tmp_path / "out", tmp_path / ".out.partial"
    with pytest.raises(ShardFailedError, match=r"shard 1 \(episodes 2-3\).*RuntimeError: expert crashed"):
        write_sharded(
            partial(logged_expert_episodes, tmp_path / "log-1", 2), 8, out, config, 2, "", progress=False, workers=2
        )
    assert not out.exists()
    finished = {path.name for path in partial_dir.glob("shard-*")}
    assert "shard-00000" in finished and "shard-00001" not in finished
    # resumed in one worker: the worker count is no part of the run (and one spawn fewer keeps the test fast)
    write_sharded(
        partial(logged_expert_episodes, tmp_path / "log-2", None), 8, out, config, 2, "", progress=False, workers=1
    )
    redone = {f"shard-{int(path.name) // 2:05d}" for path in (tmp_path / "log-2").iterdir()}
    assert redone == {f"shard-{number:05d}" for number in range(4)} - finished
    assert dataset_differences(one_worker_run, load_episodes(out)) == []
    assert not partial_dir.exists()


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


def test_epsilon_takes_and_records_random_actions_whose_transitions_the_simulator_makes(tmp_path):
    from imaginebench.rollout_quality import check_rollouts

    expert = load_episodes(collect("BabyAI-v0", "train", 12, tmp_path / "expert", seed=3, progress=False))
    noisy = load_episodes(collect("BabyAI-v0", "train", 12, tmp_path / "noisy", seed=3, progress=False, epsilon=0.5))
    assert noisy.metadata["generator"]["epsilon"] == 0.5 and "epsilon" not in expert.metadata["generator"]
    assert noisy.num_steps > expert.num_steps  # random steps lengthen the episodes
    assert all(check.drift_errors == 0 for check in check_rollouts(noisy))  # the recorded actions were the ones taken
    assert not torch.equal(noisy.steps["action"][:20], expert.steps["action"][:20])


def test_steps_after_success_extend_each_episode_by_random_steps_past_its_goal(tmp_path):
    from imaginebench.rollout_quality import check_rollouts

    plain = load_episodes(collect("BabyAI-v0", "train", 12, tmp_path / "plain", seed=3, progress=False, epsilon=0.5))
    tail = load_episodes(
        collect("BabyAI-v0", "train", 12, tmp_path / "tail", seed=3, progress=False, epsilon=0.5, steps_after_success=5)
    )
    assert tail.metadata["generator"]["steps_after_success"] == 5
    assert tail.metadata["counts"]["per_task"] == plain.metadata["counts"]["per_task"]  # success: goal reached at all
    assert not tail.steps["terminated"].any()  # the collector never stopped at a goal
    assert all(check.drift_errors == 0 for check in check_rollouts(tail))  # the random steps were the ones taken
    for episode in range(12):
        before = plain.steps[plain.steps["episode_id"] == episode]
        after = tail.steps[tail.steps["episode_id"] == episode]
        if not before["success"][-1]:  # never reached its goal: the same episode, cut at the horizon
            assert torch.equal(after["action"], before["action"])
            continue
        assert after.batch_size[0] == before.batch_size[0] + 5 and bool(after["truncated"][-1])
        assert torch.equal(after["action"][: before.batch_size[0]], before["action"])  # same steps up to the goal
        assert torch.equal(after["state"][: before.batch_size[0]], before["state"])


def test_steps_after_success_needs_discrete_actions_and_a_count(tmp_path):
    with pytest.raises(UserInputError, match="--steps-after-success: needs a discrete action space"):
        collect("BabyAI-v0", "train", 2, tmp_path / "a", progress=False, steps_after_success=-1)
    with pytest.raises(UserInputError, match="got 3 for Mujoco-v0"):
        collect("Mujoco-v0", "train", 2, tmp_path / "b", progress=False, steps_after_success=3)
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_epsilon_needs_discrete_actions_and_a_probability(tmp_path):
    with pytest.raises(UserInputError, match="--epsilon: needs a discrete action space and 0 < epsilon <= 1"):
        collect("BabyAI-v0", "train", 2, tmp_path / "a", progress=False, epsilon=1.5)
    with pytest.raises(UserInputError, match="got 0.1 for Mujoco-v0"):
        collect("Mujoco-v0", "train", 2, tmp_path / "b", progress=False, epsilon=0.1)
