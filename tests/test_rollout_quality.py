"""Rollout quality checks on hand-made rollouts whose answers are known."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from datamodules.offline_data import OfflineDataModule
from imaginebench.collect import collect, episode_seed
from imaginebench.datasets import DatasetError, EpisodeDataset, load_episodes, write_episodes
from imaginebench.envs.babyai.layout import DROP, MOVES, STATE_INDEX
from imaginebench.envs.halfcheetah import EXPERT_DIR
from imaginebench.registry import make
from imaginebench.rollout_quality import check_rollouts, failed_checks, format_quality_table, quality_report


def as_imaginary(dataset: EpisodeDataset, steps) -> EpisodeDataset:
    return EpisodeDataset(
        steps, dataset.instruction_texts, dataset.instruction_embeddings, {**dataset.metadata, "source": "imaginary"}
    )


def replace_generated_state(steps, episode: int, t: int, state: torch.Tensor) -> None:
    """Make ``state`` the generated s_{t+1} of ``episode`` (the next state of step t and the state of step t+1)."""
    rows = (steps["episode_id"] == episode).nonzero().flatten()
    steps["next_state"][rows[t]] = state
    if t + 1 < rows.numel():
        steps["state"][rows[t + 1]] = state


@pytest.fixture(scope="module")
def corrupted(babyai_real, tmp_path_factory):
    """Expert rollouts with three known faults: episode 1 is truncated one step before its goal; in
    episode 2 the first move does nothing (a legal state the simulator does not produce); in
    episode 3 the first generated state puts the box on the ball's cell (illegal)."""
    real = load_episodes(babyai_real)
    steps = real.steps.clone()
    last_of_1 = (steps["episode_id"] == 1).nonzero().flatten()[-1]
    steps = steps[torch.arange(steps.batch_size[0]) != last_of_1]
    steps["truncated"][last_of_1 - 1] = True  # it ran out of steps
    first_of_2 = int((steps["episode_id"] == 2).nonzero()[0])
    assert not torch.equal(steps["state"][first_of_2], steps["next_state"][first_of_2])
    replace_generated_state(steps, 2, 0, steps["state"][first_of_2].clone())
    first_of_3 = int((steps["episode_id"] == 3).nonzero()[0])
    broken = steps["next_state"][first_of_3].clone()
    broken[STATE_INDEX["box_row"]], broken[STATE_INDEX["box_col"]] = (
        broken[STATE_INDEX["ball_row"]],
        broken[STATE_INDEX["ball_col"]],
    )
    replace_generated_state(steps, 3, 0, broken)
    return write_episodes(as_imaginary(real, steps), tmp_path_factory.mktemp("quality") / "corrupted")


def drifted(real: EpisodeDataset, episode: int) -> tuple[torch.Tensor, np.ndarray]:
    """The rows of ``episode`` as a model that gets its first step wrong would generate them: the
    first generated state follows another move than the recorded action, and every later state is
    the simulator's step from the generated one with the recorded action. Also returns the states."""
    steps = real.steps
    rows = (steps["episode_id"] == episode).nonzero().flatten()
    actions = steps["action"][rows].numpy()
    env = make("BabyAI-v0", real.metadata["level"])
    seed, task = episode_seed(real.metadata["generator"]["seed"], episode), real.tasks[int(steps["task_id"][rows[0]])]
    observation = env.reset(seed=seed, options={"task": task})[0]
    for move in MOVES:  # the first move that leads elsewhere than the recorded first action
        first = env.step(move)[0]["state"]
        if not np.array_equal(first, steps["next_state"][rows[0]].numpy()):
            break
        env.reset(seed=seed, options={"task": task})
    states = np.stack([observation["state"], first, *(env.step(a)[0]["state"] for a in actions[1:])])
    env.close()
    return rows, states


def test_expert_rollouts_pass_every_check(babyai_real):
    checks = check_rollouts(load_episodes(babyai_real))
    assert len(checks) == 40
    assert all(
        c.goal_consistent and c.one_step_errors == 0 and c.drift_errors == 0 and c.illegal_states == 0 for c in checks
    )


@pytest.mark.parametrize("env_id", ["Ball-v0", "Mujoco-v0", "MetaWorld-v0"])
@pytest.mark.filterwarnings("ignore:Constant")  # Meta-World's package warns about its own gains
def test_expert_rollouts_have_no_transition_error_where_it_can_be_checked(env_id, tmp_path):
    """One-step checks from the recorded (float32) states reproduce every expert transition; Meta-World's
    state does not determine its simulator, so its one-step figure is unavailable, not zero."""
    if env_id == "Mujoco-v0" and not (EXPERT_DIR / "jumps.pt").is_file():
        pytest.skip("shipped experts missing")
    report = quality_report(load_episodes(collect(env_id, "train", 2, tmp_path / "real", seed=1, progress=False)))
    assert all(c["drift_errors"] == 0 and c["illegal_states"] == 0 for c in report["rollouts"])
    checkable = env_id != "MetaWorld-v0"
    assert [c["one_step_errors"] for c in report["rollouts"]] == ([0, 0] if checkable else [None, None])
    assert report["overall"]["one_step_error_rate"] == (0.0 if checkable else None)
    table = format_quality_table([report]).splitlines()
    assert all(("n/a" in line) != checkable for line in table[1:])


def test_a_wrong_step_is_one_transition_error_but_drifts_every_later_step(babyai_real, tmp_path):
    real = load_episodes(babyai_real)
    steps = real.steps.clone()
    rows, states = drifted(real, 5)
    steps["state"][rows], steps["next_state"][rows] = torch.from_numpy(states[:-1]), torch.from_numpy(states[1:])
    checks = {
        c.episode_id: c
        for c in check_rollouts(load_episodes(write_episodes(as_imaginary(real, steps), tmp_path / "drifted")))
    }
    away = int(np.any(states[1:] != real.steps["next_state"][rows].numpy(), axis=1).sum())
    assert checks[5].one_step_errors == 1 and checks[5].illegal_states == 0
    assert checks[5].drift_errors == away > 1
    assert all(c.one_step_errors == c.drift_errors == 0 for i, c in checks.items() if i != 5)


def test_known_faults_are_found_and_nothing_else(corrupted):
    """A single wrong generated state between real ones is one drift error (the replay goes on along
    the real states) but two one-step errors: the step into it and the step out of it."""
    checks = {c.episode_id: c for c in check_rollouts(load_episodes(corrupted))}
    assert failed_checks(checks[1]) == {"goal"}
    assert (checks[2].drift_errors, checks[2].one_step_errors, checks[2].illegal_states) == (1, 2, 0)
    assert failed_checks(checks[2]) == {"transitions"}
    assert (checks[3].drift_errors, checks[3].one_step_errors, checks[3].illegal_states) == (1, 2, 1)
    assert failed_checks(checks[3]) == {"transitions", "legal"} and checks[3].violations
    assert all(not failed_checks(c) and c.one_step_errors == 0 for i, c in checks.items() if i not in (1, 2, 3))


def test_report_rates_match_the_faults(corrupted):
    report = quality_report(load_episodes(corrupted))
    overall = report["overall"]
    assert overall["rollouts"] == 40
    assert overall["goal_consistency"] == pytest.approx(39 / 40)
    assert overall["clean_goal_consistency"] == pytest.approx(37 / 40)  # 2 and 3 reach the goal through a wrong step
    steps = sum(c["length"] for c in report["rollouts"])
    assert overall["one_step_error_rate"] == pytest.approx(4 / steps)
    assert overall["drift_error_rate"] == pytest.approx(2 / steps)
    assert overall["illegal_state_rate"] == pytest.approx(1 / steps)
    assert overall["rollouts_with_one_step_error"] == overall["rollouts_with_drift"] == pytest.approx(2 / 40)
    assert sum(s["rollouts"] for s in report["per_task"].values()) == 40
    assert all(s["one_step_error_rate"] is not None and "drift_error_rate" in s for s in report["per_task"].values())
    assert overall["replayed_goal_consistency"] == pytest.approx(39 / 40)  # 1 lacks its last action; 2, 3 act right
    header, first = format_quality_table([report]).splitlines()[:2]
    assert header.split()[3:8] == ["consistent", "clean", "replayed", "one-step", "drift"]
    assert first.split()[4:8] == [f"{37 / 40:.1%}", f"{39 / 40:.1%}", f"{4 / steps:.1%}", f"{2 / steps:.1%}"]


def test_actions_that_never_act_miss_the_goal_their_generated_states_reach(babyai_real, tmp_path):
    """Expert states with the action "drop" (nothing carried: nothing happens) at every step: the generated states
    reach the goal, the replayed actions leave the agent where it started."""
    real = load_episodes(babyai_real)
    steps = real.steps.clone()
    steps["action"][steps["episode_id"] == 4] = DROP
    checks = {
        c.episode_id: c
        for c in check_rollouts(load_episodes(write_episodes(as_imaginary(real, steps), tmp_path / "idle")))
    }
    assert checks[4].goal_consistent and not checks[4].actions_reach_goal and checks[4].drift_errors > 0
    assert all(c.actions_reach_goal for i, c in checks.items() if i != 4)


def test_datamodule_filter_drops_exactly_the_failing_rollouts(babyai_real, corrupted):
    source = load_episodes(corrupted).steps
    first_states = {e: source["state"][(source["episode_id"] == e).nonzero()[0]] for e in range(40)}

    def kept_first_states(filters: list[str]) -> torch.Tensor:
        datamodule = OfflineDataModule(
            "BabyAI-v0", real=[str(babyai_real)], imaginary=[str(corrupted)], imaginary_filter=filters, batch_size=8
        )
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
    dataset = write_episodes(
        EpisodeDataset(real.steps.clone(), real.instruction_texts, real.instruction_embeddings, metadata),
        tmp_path / "d",
    )
    with pytest.raises(DatasetError, match="generator.seed"):
        check_rollouts(load_episodes(dataset))
