"""Rollout quality checks on hand-made rollouts whose answers are known."""

from __future__ import annotations

import pytest
import torch

from datamodules.offline_data import OfflineDataModule
from imaginebench.datasets import DatasetError, EpisodeDataset, load_episodes, write_episodes
from imaginebench.envs.babyai.world import STATE_INDEX
from imaginebench.rollout_quality import check_rollouts, failed_checks, format_quality_table, quality_report


def as_imaginary(dataset: EpisodeDataset, steps) -> EpisodeDataset:
    return EpisodeDataset(steps, dataset.instruction_texts, dataset.instruction_embeddings, {**dataset.metadata, "source": "imaginary"})


def replace_generated_state(steps, episode: int, t: int, state: torch.Tensor) -> None:
    """Make ``state`` the generated s_{t+1} of ``episode`` (the next state of step t and the state of step t+1)."""
    rows = (steps["episode_id"] == episode).nonzero().flatten()
    steps["next_state"][rows[t]] = state
    if t + 1 < rows.numel():
        steps["state"][rows[t + 1]] = state


@pytest.fixture(scope="module")
def corrupted(babyai_real, tmp_path_factory):
    """Expert rollouts with three known faults: episode 1 stops one step before its goal; in
    episode 2 the first move does nothing (a legal state the simulator does not produce); in
    episode 3 the first generated state puts the box on the ball's cell (illegal)."""
    real = load_episodes(babyai_real)
    steps = real.steps.clone()
    last_of_1 = (steps["episode_id"] == 1).nonzero().flatten()[-1]
    steps = steps[torch.arange(steps.batch_size[0]) != last_of_1]
    first_of_2 = int((steps["episode_id"] == 2).nonzero()[0])
    assert not torch.equal(steps["state"][first_of_2], steps["next_state"][first_of_2])
    replace_generated_state(steps, 2, 0, steps["state"][first_of_2].clone())
    first_of_3 = int((steps["episode_id"] == 3).nonzero()[0])
    broken = steps["next_state"][first_of_3].clone()
    broken[STATE_INDEX["box_row"]], broken[STATE_INDEX["box_col"]] = broken[STATE_INDEX["ball_row"]], broken[STATE_INDEX["ball_col"]]
    replace_generated_state(steps, 3, 0, broken)
    return write_episodes(as_imaginary(real, steps), tmp_path_factory.mktemp("quality") / "corrupted")


def test_expert_rollouts_pass_every_check(babyai_real):
    checks = check_rollouts(load_episodes(babyai_real))
    assert len(checks) == 40
    assert all(c.goal_consistent and c.transition_errors == 0 and c.illegal_states == 0 for c in checks)


def test_known_faults_are_found_and_nothing_else(corrupted):
    checks = {c.episode_id: c for c in check_rollouts(load_episodes(corrupted))}
    assert failed_checks(checks[1]) == {"goal"}
    assert checks[2].transition_errors == 1 and checks[2].illegal_states == 0 and failed_checks(checks[2]) == {"transitions"}
    assert checks[3].illegal_states == 1 and checks[3].transition_errors == 1 and failed_checks(checks[3]) == {"transitions", "legal"}
    assert checks[3].violations
    assert all(not failed_checks(c) for i, c in checks.items() if i not in (1, 2, 3))


def test_report_rates_match_the_faults(corrupted):
    report = quality_report(load_episodes(corrupted))
    overall = report["overall"]
    assert overall["rollouts"] == 40
    assert overall["goal_consistency"] == pytest.approx(39 / 40)
    steps = sum(c["length"] for c in report["rollouts"])
    assert overall["transition_error_rate"] == pytest.approx(2 / steps)
    assert overall["illegal_state_rate"] == pytest.approx(1 / steps)
    assert sum(s["rollouts"] for s in report["per_task"].values()) == 40
    assert "consistent" in format_quality_table([report])


def test_datamodule_filter_drops_exactly_the_failing_rollouts(babyai_real, corrupted):
    source = load_episodes(corrupted).steps
    first_states = {e: source["state"][(source["episode_id"] == e).nonzero()[0]] for e in range(40)}

    def kept_first_states(filters: list[str]) -> torch.Tensor:
        datamodule = OfflineDataModule("BabyAI-v0", real=[str(babyai_real)], imaginary=[str(corrupted)], imaginary_filter=filters, batch_size=8)
        datamodule.setup()
        steps = datamodule.imaginary_dataset.steps  # episodes are renumbered, so compare their first states
        return steps["state"][steps["step"] == 0]

    def expected(dropped: set[int]) -> torch.Tensor:
        return torch.cat([first_states[e] for e in range(40) if e not in dropped])

    assert torch.equal(kept_first_states([]), expected(set()))
    assert torch.equal(kept_first_states(["goal"]), expected({1}))
    assert torch.equal(kept_first_states(["legal"]), expected({3}))
    assert torch.equal(kept_first_states(["goal", "transitions", "legal"]), expected({1, 2, 3}))
    with pytest.raises(ValueError, match="data.imaginary_filter"):
        OfflineDataModule("BabyAI-v0", real=[str(babyai_real)], imaginary_filter=["pretty"])


def test_rollouts_without_a_seed_cannot_be_replayed(babyai_real, tmp_path):
    real = load_episodes(babyai_real)
    metadata = {**real.metadata, "generator": {"kind": "external"}}
    dataset = write_episodes(EpisodeDataset(real.steps.clone(), real.instruction_texts, real.instruction_embeddings, metadata), tmp_path / "d")
    with pytest.raises(DatasetError, match="generator.seed"):
        check_rollouts(load_episodes(dataset))
