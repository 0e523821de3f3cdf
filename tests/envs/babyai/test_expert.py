"""docs/original-benchmark.md#what-we-require-of-every-domain: every task's expert succeeds >= 90 %, a uniformly random policy <= 20 %."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import imaginebench
from imaginebench.envs.babyai import DOMAIN
from imaginebench.envs.babyai.layout import COLORS, DOOR_CLOSED, DOOR_LOCKED, DOOR_OPEN, OBJECTS, ROOM_CELLS, World
from imaginebench.envs.babyai.tasks import TASKS

LEVEL_TASK = [(level, task) for level, tasks in DOMAIN.tasks.items() for task in tasks]


def success_rate(level, task, policy_for_episode, episodes):
    env = imaginebench.make("BabyAI-v0", level=level, task=task)
    successes = 0
    for seed in range(episodes):
        env.reset(seed=seed)
        policy, done = policy_for_episode(seed), False
        while not done:
            _, _, terminated, truncated, info = env.step(policy(env))
            done = terminated or truncated
        successes += info["is_success"]
    return successes / episodes


@pytest.mark.parametrize("level, task", LEVEL_TASK)
def test_expert_solves_every_task(level, task):
    assert success_rate(level, task, lambda seed: DOMAIN.expert(), episodes=25) == 1.0


@pytest.mark.parametrize("level, task", LEVEL_TASK)
def test_random_policy_rarely_succeeds(level, task):
    """Quirk 12 of docs/original-benchmark.md: the original's GoWall and GoCenter were solved by chance."""

    def random_policy(seed):
        rng = np.random.default_rng(seed)
        return lambda env: int(rng.integers(DOMAIN.num_actions))

    assert success_rate(level, task, random_policy, episodes=100) <= 0.2


def test_expert_works_through_gymnasium_wrappers():
    import gymnasium as gym

    env = gym.make("imaginebench/BabyAI-v0", level="hard", task="PutPile")
    expert, done = DOMAIN.expert(), False
    env.reset(seed=7)
    while not done:
        _, _, terminated, truncated, info = env.step(expert(env.unwrapped))
        done = terminated or truncated
    assert info["is_success"]


@st.composite
def any_start(draw):
    """Any world (objects may touch, the agent may hold something or stand on an object) and goal."""
    task = draw(st.sampled_from(sorted(TASKS)))
    goal = draw(st.sampled_from(TASKS[task].goals))
    cells = draw(st.lists(st.sampled_from(ROOM_CELLS), min_size=3, max_size=3, unique=True))
    carrying = draw(st.sampled_from((None, *OBJECTS)))
    colors = {name: draw(st.sampled_from(COLORS)) for name in (*OBJECTS, "door")}
    door_state = draw(st.sampled_from((DOOR_OPEN, DOOR_CLOSED)))
    if TASKS[task].door_locked:
        colors["door"], door_state = colors["key"], DOOR_LOCKED
    positions = {obj: None if obj == carrying else cell for obj, cell in zip(OBJECTS, cells)}
    world = World(colors, positions, draw(st.integers(1, 6)), door_state, draw(st.sampled_from(ROOM_CELLS)), carrying)
    return world, goal


@settings(max_examples=60, deadline=None)
@given(any_start())
def test_expert_reaches_the_goal_from_any_state(start):
    world, goal = start
    level = next(level for level, tasks in DOMAIN.tasks.items() if goal.task in tasks)
    env = imaginebench.make("BabyAI-v0", level=level)
    _, info = env.reset(seed=0, options={"world": world, "goal": goal})
    expert, done = DOMAIN.expert(), info["is_success"]
    while not done:
        _, _, terminated, truncated, info = env.step(expert(env))
        done = terminated or truncated
    assert info["is_success"]
