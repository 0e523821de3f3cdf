import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import imaginebench
from imaginebench.envs.babyai import HORIZON
from imaginebench.envs.babyai.layout import (
    DOOR_CLOSED,
    DOOR_LOCKED,
    DOOR_OPEN,
    DROP,
    EAST,
    NORTH,
    OBJECTS,
    PICKUP,
    ROOM_CELLS,
    SOUTH,
    STATE_HIGH,
    STATE_INDEX,
    TOGGLE,
    WEST,
    decode_state,
    encode_state,
)
from imaginebench.envs.babyai.tasks import LEVEL_TASKS, Goal
from imaginebench.levels import LEVELS
from tests.envs.babyai.worlds import make_world


@pytest.fixture(scope="module")
def envs():
    return {level: imaginebench.make("BabyAI-v0", level=level) for level in LEVELS}


def start(env, world, goal=Goal("GoTo", ("ball",))):
    """Reset ``env`` into a hand-made world (the goal's task must belong to the env's level)."""
    obs, info = env.reset(seed=0, options={"world": world, "goal": goal})
    return obs


def rollout(env, seed, actions):
    obs, info = env.reset(seed=seed)
    states = [obs["state"]]
    for action in actions:
        obs, *_ = env.step(action)
        states.append(obs["state"])
    return info["instruction"], np.stack(states)


def test_reset_with_a_seed_is_deterministic(envs):
    env = envs["train"]
    actions = np.random.default_rng(0).integers(0, 7, size=30)
    first, second = rollout(env, 123, actions), rollout(env, 123, actions)
    assert first[0] == second[0]
    np.testing.assert_array_equal(first[1], second[1])
    other = imaginebench.make("BabyAI-v0", level="train")  # a fresh instance too
    np.testing.assert_array_equal(rollout(other, 123, actions)[1], first[1])
    assert not np.array_equal(rollout(env, 124, actions)[1], first[1])


@pytest.mark.parametrize("level", LEVELS)
def test_observation_and_info(envs, level):
    env = envs[level]
    obs, info = env.reset(seed=1)
    assert set(obs) == {"state", "instruction_embedding"}
    assert obs["state"].shape == (17,) and obs["state"].dtype == np.float32
    assert obs["instruction_embedding"].shape == (env.instructions.dim,)
    assert obs["instruction_embedding"].dtype == np.float32
    assert env.observation_space.contains(obs)
    assert set(info) >= {"is_success", "task", "instruction"} and info["task"] in LEVEL_TASKS[level]
    np.testing.assert_array_equal(obs["instruction_embedding"], env.instructions.embedding(info["instruction"]))
    obs, reward, terminated, truncated, info = env.step(WEST)
    assert set(info) >= {"is_success", "task", "instruction"} and isinstance(reward, float)


@pytest.mark.parametrize("level", LEVELS)
def test_instruction_names_the_episodes_colours(envs, level):
    env = envs[level]
    tasks_seen = set()
    for seed in range(40):
        _, info = env.reset(seed=seed)
        world, goal = env.world(), env.goal
        tasks_seen.add(goal.task)
        for obj in goal.objects:
            assert world.colors[obj] in info["instruction"]
            assert obj in info["instruction"] or goal.task in ("Open", "OpenGo", "OpenPick")
        if goal.corner:
            assert all(part in info["instruction"] for part in goal.corner.split("-"))
    assert tasks_seen == set(LEVEL_TASKS[level]), "without a fixed task, resets draw every task"


def test_a_fixed_task_and_the_task_option(envs):
    env = imaginebench.make("BabyAI-v0", level="easy", task="GoWall")
    assert {env.reset(seed=s)[1]["task"] for s in range(10)} == {"GoWall"}
    assert envs["easy"].reset(seed=0, options={"task": "GoCenter"})[1]["task"] == "GoCenter"
    with pytest.raises(ValueError, match="valid"):
        imaginebench.make("BabyAI-v0", level="easy", task="GoTo")


def test_rephrase_uses_all_its_phrasings(envs):
    """Quirk 11 of docs/original-benchmark.md: the original evaluated only the first rephrasing."""
    env = envs["rephrase"]
    texts = {env.reset(seed=s, options={"task": "Open"})[1]["instruction"] for s in range(200)}
    assert len(texts) > 50


# ----------------------------------------------------------------------------- action semantics


def agent_after(env, world, *actions):
    start(env, world)
    for action in actions:
        env.step(action)
    return env.world()


def test_moves_are_absolute_and_blocked_by_walls(envs):
    env = envs["train"]
    assert agent_after(env, make_world(agent=(3, 3)), WEST).agent == (2, 3)
    assert agent_after(env, make_world(agent=(3, 3)), EAST).agent == (4, 3)
    assert agent_after(env, make_world(agent=(3, 3)), NORTH).agent == (3, 2)
    assert agent_after(env, make_world(agent=(3, 3)), SOUTH).agent == (3, 4)
    assert agent_after(env, make_world(agent=(2, 1)), NORTH).agent == (2, 1)
    assert agent_after(env, make_world(agent=(2, 6)), SOUTH, SOUTH).agent == (2, 6)
    assert agent_after(env, make_world(agent=(6, 2)), EAST).agent == (6, 2)


@pytest.mark.parametrize("door_state", [DOOR_CLOSED, DOOR_OPEN, DOOR_LOCKED])
def test_doors_are_never_passable(envs, door_state):
    assert agent_after(envs["train"], make_world(agent=(6, 3), door_state=door_state), EAST).agent == (6, 3)


def test_the_agent_may_walk_over_objects(envs):
    world = agent_after(envs["train"], make_world(agent=(2, 1)), WEST, SOUTH)
    assert world.agent == (1, 2) and world.positions["ball"] == (1, 1)


def test_pickup_takes_the_object_under_the_agent_only_with_empty_hands(envs):
    env = envs["train"]
    assert agent_after(env, make_world(agent=(2, 1)), PICKUP).carrying is None
    world = agent_after(env, make_world(agent=(1, 1)), PICKUP)
    assert world.carrying == "ball" and world.positions["ball"] is None
    state = env.step(WEST)[0]["state"]  # into the west wall: nothing changes
    assert (state[STATE_INDEX["carry_type"]], state[STATE_INDEX["ball_row"]], state[STATE_INDEX["ball_col"]]) == (
        6,
        0,
        0,
    )
    world = agent_after(env, make_world(agent=(1, 3), carrying="ball"), PICKUP)
    assert world.carrying == "ball" and world.positions["box"] == (1, 3)


def test_drop_needs_a_free_cell(envs):
    env = envs["train"]
    world = agent_after(env, make_world(agent=(4, 4), carrying="key"), DROP)
    assert world.carrying is None and world.positions["key"] == (4, 4)
    world = agent_after(env, make_world(agent=(1, 3), carrying="key"), DROP)
    assert world.carrying == "key" and world.positions["box"] == (1, 3)
    world = agent_after(env, make_world(agent=(4, 4), carrying="key"), DROP, EAST, NORTH)
    assert world.positions["key"] == (4, 4) and world.agent == (5, 3)


def test_toggle_opens_and_closes_an_adjacent_door(envs):
    env = envs["train"]
    assert agent_after(env, make_world(agent=(5, 3)), TOGGLE).door_state == DOOR_CLOSED  # not adjacent
    assert agent_after(env, make_world(agent=(6, 2)), TOGGLE).door_state == DOOR_CLOSED  # diagonal
    assert agent_after(env, make_world(agent=(6, 3)), TOGGLE).door_state == DOOR_OPEN
    assert agent_after(env, make_world(agent=(6, 3)), TOGGLE, TOGGLE).door_state == DOOR_CLOSED


def test_a_locked_door_opens_only_with_the_key_of_its_colour(envs):
    env, goal = envs["hard"], Goal("OpenLock", ("key",))
    locked = {"door_state": DOOR_LOCKED, "agent": (6, 3)}
    same = {"key": "yellow", "door": "yellow"}

    def door_after(**world):
        start(env, make_world(**world), goal)
        return env.step(TOGGLE)

    assert door_after(**locked, colors=same)[0]["state"][STATE_INDEX["door_state"]] == DOOR_LOCKED
    assert (
        door_after(**locked, colors={"key": "red", "door": "yellow"}, carrying="key")[0]["state"][
            STATE_INDEX["door_state"]
        ]
        == DOOR_LOCKED
    )
    assert (
        door_after(**locked, colors={"ball": "yellow", "door": "yellow"}, carrying="ball")[0]["state"][
            STATE_INDEX["door_state"]
        ]
        == DOOR_LOCKED
    )
    obs, reward, terminated, truncated, info = door_after(**locked, colors=same, carrying="key")
    assert obs["state"][STATE_INDEX["door_state"]] == DOOR_OPEN and terminated and info["is_success"]


# ----------------------------------------------------------------------------- reward and episode end


def test_sparse_reward_and_termination_on_success(envs):
    env = envs["train"]
    start(env, make_world(agent=(2, 1)), Goal("GoTo", ("ball",)))
    assert env.step(SOUTH)[1:4] == (0.0, False, False)
    env.step(NORTH)
    _, reward, terminated, truncated, info = env.step(WEST)
    assert env.step_count == 3
    assert info["is_success"] and terminated and not truncated
    assert reward == pytest.approx(1 - 0.9 * 3 / HORIZON)


def test_truncation_at_the_horizon(envs):
    env = envs["train"]
    start(env, make_world(agent=(6, 6)), Goal("GoTo", ("ball",)))
    for t in range(1, HORIZON + 1):
        _, reward, terminated, truncated, _ = env.step(DROP)  # a no-op
        assert reward == 0.0 and not terminated and truncated == (t == HORIZON)


def test_render_draws_the_grid_through_imaginebench_and_gymnasium_make():
    import gymnasium as gym

    for env in (
        imaginebench.make("BabyAI-v0", level="hard", render_mode="rgb_array"),
        gym.make("imaginebench/BabyAI-v0", level="hard", render_mode="rgb_array"),
    ):
        env.reset(seed=0)
        frame = env.render()
        assert frame.shape[:2] == (8 * 32, 15 * 32) and frame.dtype == np.uint8


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(LEVELS), st.integers(0, 2**31 - 1), st.lists(st.integers(0, 6), max_size=HORIZON))
def test_states_stay_valid_under_any_actions(envs, level, seed, actions):
    env = envs[level]
    obs, _ = env.reset(seed=seed)
    for action in actions:
        obs, _, terminated, truncated, _ = env.step(action)
        state, world = obs["state"], env.world()
        assert np.all(state >= 0) and np.all(state <= STATE_HIGH)
        assert decode_state(state) == world and np.array_equal(encode_state(world), state)
        assert world.agent in ROOM_CELLS
        floor = list(world.floor_cells().values())
        assert len(set(floor)) == len(floor) and all(cell in ROOM_CELLS for cell in floor)
        assert (world.carrying is None) == (len(floor) == len(OBJECTS))
        if terminated or truncated:
            break


def test_set_state_takes_the_carried_key_and_the_locked_door_from_the_vector(envs):
    """Mid-episode, the vector alone decides what the agent holds and how the door is: the key it
    carries opens the locked door, and the goal and step count of the episode stay."""
    env = envs["hard"]
    start(env, make_world(agent=(2, 2)), Goal("OpenLock", ("key",)))
    env.step(SOUTH)
    env.set_state(
        encode_state(
            make_world(agent=(6, 3), door_state=DOOR_LOCKED, colors={"key": "yellow", "door": "yellow"}, carrying="key")
        )
    )
    assert env.step_count == 1 and env.world().carrying == "key"
    obs, _, terminated, _, info = env.step(TOGGLE)
    assert (
        obs["state"][STATE_INDEX["door_state"]] == DOOR_OPEN
        and terminated
        and info["is_success"]
        and env.step_count == 2
    )
    with pytest.raises(ValueError, match="overlap"):
        env.set_state(encode_state(make_world(box=(1, 1))))  # the box on the ball's cell
