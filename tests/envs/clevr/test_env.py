import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import imaginebench
from imaginebench.envs.clevr import HORIZON
from imaginebench.envs.clevr.layout import (
    BALL_RADIUS,
    NUM_ACTIONS,
    STATE_DIM,
    action_of,
    positions_of,
    state_violations,
)
from imaginebench.envs.clevr.tasks import RELATION_HORIZON, Goal, Relation
from imaginebench.levels import LEVELS

RED, BLUE, GREEN, PURPLE, CYAN = range(5)
LAYOUT = [[-0.4, 0.0], [-0.1, 0.0], [0.2, 0.3], [0.4, 0.5], [0.0, 0.5]]
EAST, NORTH, WEST, SOUTH = 0, 1, 2, 3


@pytest.fixture(scope="module")
def envs():
    return {level: imaginebench.make("Ball-v0", level=level) for level in LEVELS}


def start(env, goal, positions=LAYOUT, instruction=None):
    """Reset ``env`` into a hand-placed layout (the goal's task must belong to the env's level)."""
    text = instruction or env.instructions.texts[0]
    obs, _ = env.reset(seed=0, options={"start": {"positions": positions, "goal": goal.to_json(), "instruction": text}})
    return obs


def test_observation_layout(envs):
    env = envs["train"]
    obs, info = env.reset(seed=3)
    assert set(obs) == {"state", "instruction_embedding"}
    assert obs["state"].shape == (STATE_DIM,) and obs["state"].dtype == np.float32
    assert env.observation_space.contains(obs)
    assert env.action_space == gym.spaces.Discrete(NUM_ACTIONS)
    np.testing.assert_array_equal(obs["instruction_embedding"], env.instructions.embedding(info["instruction"]))
    assert info["task"] in env.tasks and not info["is_success"]


def test_first_push_after_reset_hits_the_ball_at_its_stored_position(envs):
    """The original aimed the first push at a stale layout (quirk 2 of docs/original-benchmark.md)."""
    env = envs["train"]
    obs = start(env, Goal("push-left", (Relation(RED, GREEN, "left"),)))
    np.testing.assert_allclose(positions_of(obs["state"]), LAYOUT, atol=1e-6)
    obs, *_ = env.step(action_of(PURPLE, WEST))
    moved = np.linalg.norm(positions_of(obs["state"]) - np.asarray(LAYOUT), axis=1)
    assert moved[PURPLE] > BALL_RADIUS and np.all(np.delete(moved, PURPLE) < 1e-6)
    assert positions_of(obs["state"])[PURPLE, 0] < LAYOUT[PURPLE][0]


def test_push_into_another_ball_moves_both(envs):
    env = envs["train"]
    start(
        env,
        Goal("push-left", (Relation(RED, GREEN, "left"),)),
        positions=[[-0.3, 0.0], [-0.05, 0.0], [0.2, 0.4], [0.45, 0.55], [-0.4, 0.5]],
    )
    obs, *_ = env.step(action_of(RED, EAST))
    positions = positions_of(obs["state"])
    assert positions[BLUE, 0] > -0.05 + 0.01 and positions[RED, 0] > -0.3 + 0.05
    assert state_violations(obs["state"]) == []


def test_reaching_the_goal_ends_the_episode_with_reward(envs):
    env = envs["train"]
    # red 0.45 left of green: one push east brings it within reach of green's left side
    start(
        env,
        Goal("push-left", (Relation(RED, GREEN, "left"),)),
        positions=[[-0.45, 0.3], [0.4, -0.1], [0.0, 0.3], [0.4, 0.5], [0.0, -0.1]],
    )
    _, reward, terminated, truncated, info = env.step(action_of(RED, EAST))
    assert info["is_success"] and terminated and not truncated and reward == 1.0


def test_one_step_episode_continues_after_a_wrong_push(envs):
    """The original ended every easy episode after one action (quirk 3 of docs/original-benchmark.md)."""
    env = envs["easy"]
    start(env, Goal("step-front", ball=GREEN, side="front"))
    _, reward, terminated, truncated, info = env.step(action_of(GREEN, EAST))
    assert not (terminated or truncated or info["is_success"]) and reward == 0.0
    start(env, Goal("step-front", ball=GREEN, side="front"))
    _, reward, terminated, _, info = env.step(action_of(GREEN, SOUTH))
    assert info["is_success"] and terminated and reward == 1.0


@pytest.mark.parametrize(
    "level, goal, horizon",
    [
        ("hard", Goal("line-up"), HORIZON),
        ("train", Goal("push-left", (Relation(RED, GREEN, "left"),)), RELATION_HORIZON),
    ],
    ids=["line-up", "push-left"],
)
def test_episode_is_truncated_at_its_task_horizon(envs, level, goal, horizon):
    """A side relation gets 15 pushes, not 50: the expert needs at most 7, and random pushes met it
    within 50 in a third of episodes."""
    env = envs[level]
    start(env, goal)
    assert env.horizon == horizon
    for t in range(horizon):
        _, _, terminated, truncated, _ = env.step(action_of(PURPLE, NORTH if t % 2 else SOUTH))
        assert not terminated and truncated == (t + 1 == horizon)
    assert env.step_count == horizon


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 2**16), st.lists(st.integers(0, NUM_ACTIONS - 1), min_size=1, max_size=15))
def test_pushes_keep_balls_inside_the_walls_and_apart(seed, actions):
    env = imaginebench.make("Ball-v0", level="hard")
    obs, _ = env.reset(seed=seed)
    for action in actions:
        obs, *_ = env.step(action)
        assert state_violations(obs["state"]) == []


def test_same_seed_same_episode(envs):
    env = envs["rephrase"]
    runs = []
    for _ in range(2):
        obs, info = env.reset(seed=42)
        states = [obs["state"]] + [env.step(a)[0]["state"] for a in (3, 17, 30)]
        runs.append((info["instruction"], np.stack(states)))
    assert runs[0][0] == runs[1][0]
    np.testing.assert_array_equal(runs[0][1], runs[1][1])


def test_success_flags_judge_generated_states(envs):
    env = envs["easy"]
    start(env, Goal("step-right", ball=CYAN, side="right"))
    first = np.asarray(LAYOUT, dtype=np.float32).reshape(-1)
    stepped, overlapping = first.copy(), first.copy()
    stepped[8] += 0.15
    overlapping[8], overlapping[9] = LAYOUT[BLUE][0] + 0.12, LAYOUT[BLUE][1]  # moved right, but into the blue ball
    grazing = first.copy()
    grazing[8] = LAYOUT[PURPLE][0] - 0.17  # moved right, up to 0.03 into the purple ball
    states = np.stack([first, stepped, overlapping, grazing])
    assert env.success_flags(states).tolist() == [False, True, False, False]
    assert env.state_violations(overlapping) and env.state_violations(grazing) and env.state_tolerance > 0
    # within the tolerance the transition checks allow, the grazing layout is as good as a touching one
    legal_within_tolerance = np.array([not env.state_violations_within_tolerance(s) for s in states])
    assert env.success_flags(states, legal_within_tolerance).tolist() == [False, True, False, True]
    assert env.state_violations_within_tolerance(overlapping) and not env.state_violations_within_tolerance(grazing)


def test_bad_stored_instruction_is_named(envs):
    with pytest.raises(KeyError, match="not in this table"):
        start(envs["train"], Goal("push-left", (Relation(RED, GREEN, "left"),)), instruction="Do a dance.")


def test_illegal_stored_layout_is_named(envs):
    overlapping = [[0.0, 0.0], [0.05, 0.0], [0.2, 0.4], [0.45, 0.55], [-0.4, 0.5]]
    with pytest.raises(ValueError, match="start.positions .* red and blue balls overlap"):
        start(envs["train"], Goal("push-left", (Relation(RED, GREEN, "left"),)), positions=overlapping)


def test_a_push_from_a_set_state_is_the_push_from_a_reset_into_it(envs):
    """Between pushes the balls rest and the pusher is parked, so ``set_state`` mid-episode gives
    the very push a fresh start in that layout gives."""
    env, goal = envs["train"], Goal("push-left", (Relation(RED, GREEN, "left"),))
    push, layout = (
        action_of(RED, EAST),
        [[-0.3, 0.0], [-0.05, 0.0], [0.2, 0.4], [0.45, 0.55], [-0.4, 0.5]],
    )  # red pushes blue
    start(env, goal, positions=layout)
    fresh = env.step(push)[0]["state"]
    env.reset(seed=4)
    for action in (action_of(BLUE, NORTH), action_of(CYAN, SOUTH)):
        env.step(action)
    env.set_state(np.asarray(layout, dtype=np.float32).reshape(-1))
    np.testing.assert_allclose(env.step(push)[0]["state"], fresh, atol=1e-6)
