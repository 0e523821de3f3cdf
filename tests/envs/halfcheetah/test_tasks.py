"""Success checks on synthetic state sequences (no simulator): each fixed quirk and each threshold."""

import numpy as np
import pytest

from imaginebench.envs.halfcheetah.layout import DT, DX, PITCH, STATE_DIM, VX, Z
from imaginebench.envs.halfcheetah.tasks import (
    FAST_SPEED,
    HORIZON,
    IN_PLACE,
    JUMP_DISTANCE,
    JUMP_HEIGHT,
    JUMPS,
    LEVEL_TASKS,
    RUN_SPEED,
    RUN_TARGET_SPEED,
    SHUTTLE_DISTANCE,
    SKILL_REWARDS,
    TASKS,
    WINDOW,
    jump_counts,
)


def states_with(dx: np.ndarray, z: np.ndarray | None = None, pitch: float = 0.0) -> np.ndarray:
    """A sequence from a reset state (displacement 0) followed by one state per step."""
    states = np.zeros((len(dx) + 1, STATE_DIM))
    states[1:, DX] = dx
    states[1:, VX] = np.asarray(dx) / DT
    states[:, Z] = -0.13 if z is None else np.concatenate([[-0.13], z])
    states[:, PITCH] = pitch
    return states


def constant_speed(speed: float, steps: int = HORIZON) -> np.ndarray:
    return states_with(np.full(steps, speed * DT))


def hops(count: int, steps_per_hop: int = 20) -> np.ndarray:
    """Torso height going ``count`` times from standing to above JUMP_HEIGHT and back."""
    phase = np.linspace(0.0, 2 * np.pi, steps_per_hop, endpoint=False)
    return np.tile(-0.13 + (JUMP_HEIGHT + 0.2) * np.sin(phase / 2) ** 2, count)


@pytest.mark.parametrize("direction", [1, -1])
def test_run_needs_the_speed_over_a_whole_window(direction):
    name = "run-forward" if direction == 1 else "run-backward"
    fast = TASKS[name].check(constant_speed(direction * 1.01 * RUN_SPEED))
    assert not fast[:WINDOW].any() and fast[WINDOW:].all()
    assert not TASKS[name].check(constant_speed(direction * 0.99 * RUN_SPEED)).any()
    assert not TASKS[name].check(constant_speed(-direction * 3 * RUN_SPEED)).any()


@pytest.mark.parametrize("name", ["run-forward-faster", "run-backward-faster"])
def test_faster_tasks_are_not_solved_at_the_train_experts_target_speed(name):
    direction = 1 if "forward" in name else -1
    assert not TASKS[name].check(constant_speed(direction * RUN_TARGET_SPEED)).any()
    assert TASKS[name].check(constant_speed(direction * 1.01 * FAST_SPEED))[-1]
    assert RUN_SPEED < RUN_TARGET_SPEED < FAST_SPEED


def test_jumps_count_level_take_offs_separated_by_landings():
    assert jump_counts(states_with(np.zeros(60), hops(3)))[-1] == 3
    held_high = np.full(60, JUMP_HEIGHT + 0.1)
    assert jump_counts(states_with(np.zeros(60), held_high))[-1] == 1  # staying up is one jump
    assert jump_counts(states_with(np.zeros(60), hops(3), pitch=1.2))[-1] == 0  # rearing, not jumping
    assert jump_counts(states_with(np.zeros(60), hops(3), pitch=2 * np.pi))[-1] == 3  # a full flip is level


@pytest.mark.parametrize("name, direction", [("jump-forward", 1), ("jump-backward", -1)])
def test_jump_tasks_need_jumps_and_displacement(name, direction):
    steps = 20 * JUMPS
    away = np.full(steps, direction * 1.1 * JUMP_DISTANCE / steps)
    assert TASKS[name].check(states_with(away, hops(JUMPS)))[-1]
    fewer = np.concatenate([hops(JUMPS - 1), np.full(20, -0.13)])
    assert not TASKS[name].check(states_with(away, fewer))[-1]
    assert not TASKS[name].check(states_with(-away, hops(JUMPS)))[-1]
    assert not TASKS[name].check(states_with(away))[-1]  # displacement alone is not a jump (quirk 8)


def test_jump_in_place_needs_jumps_near_the_start():
    steps = 20 * JUMPS
    assert TASKS["jump-in-place"].check(states_with(np.zeros(steps), hops(JUMPS)))[-1]
    drift = np.full(steps, 1.5 * IN_PLACE / steps)
    assert not TASKS["jump-in-place"].check(states_with(drift, hops(JUMPS)))[-1]
    assert not TASKS["jump-in-place"].check(states_with(np.zeros(steps)))[-1]  # standing still (quirk 8)


@pytest.mark.parametrize("name, first", [("forward-then-backward", 1), ("backward-then-forward", -1)])
def test_shuttles_need_both_stages_in_order(name, first):
    leg = int(np.ceil(SHUTTLE_DISTANCE / (2.0 * DT))) + 1
    there_and_back = np.concatenate([np.full(leg, first * 2.0 * DT), np.full(leg, -first * 2.0 * DT)])
    flags = TASKS[name].check(states_with(there_and_back))
    assert flags[-1] and not flags[: leg + 1].any()
    assert not TASKS[name].check(states_with(-there_and_back))[-1]  # the other order
    assert not TASKS[name].check(states_with(there_and_back[:leg]))[-1]  # only the first leg


def test_every_level_task_has_a_check_and_reward_and_skills_are_trained():
    for level, names in LEVEL_TASKS.items():
        for name in names:
            assert set(TASKS[name].skills) <= set(SKILL_REWARDS), (level, name)
    assert LEVEL_TASKS["rephrase"] == LEVEL_TASKS["train"]


def test_rewards_pay_for_what_the_task_asks():
    forward, backward = constant_speed(3.0, 5), constant_speed(-3.0, 5)
    assert TASKS["run-forward-faster"].reward(forward) > TASKS["run-forward-faster"].reward(backward)
    assert TASKS["run-forward"].reward(constant_speed(RUN_TARGET_SPEED, 5)) > TASKS["run-forward"].reward(forward)
    high, low = states_with(np.zeros(3), np.full(3, 0.3)), states_with(np.zeros(3))
    assert TASKS["jump-in-place"].reward(high) > TASKS["jump-in-place"].reward(low)
    out = constant_speed(2.0, int(SHUTTLE_DISTANCE / (2.0 * DT)) + 2)
    assert TASKS["forward-then-backward"].reward(out) < 0 < TASKS["forward-then-backward"].reward(out[:3])
