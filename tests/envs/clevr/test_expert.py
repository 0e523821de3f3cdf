import numpy as np
import pytest

import imaginebench
from imaginebench.envs.clevr import DOMAIN
from imaginebench.envs.clevr.expert import distance_to_go
from imaginebench.envs.clevr.tasks import Goal, Relation

TASKS = [(level, task) for level in ("train", "easy", "hard") for task in DOMAIN.tasks[level]]


def play(env, policy) -> bool:
    done, info = False, {}
    while not done:
        _, _, terminated, truncated, info = env.step(policy(env))
        done = terminated or truncated
    return info["is_success"]


@pytest.mark.parametrize("level, task", TASKS)
def test_expert_solves_every_task(level, task):
    env = imaginebench.make("Ball-v0", level=level, task=task)
    solved = []
    for seed in range(2 if level == "hard" else 4):
        env.reset(seed=seed)
        solved.append(play(env, DOMAIN.expert()))
    assert all(solved)


def test_random_policy_fails_the_hard_tasks():
    env = imaginebench.make("Ball-v0", level="hard", task="three-relations")
    rng = np.random.default_rng(0)
    results = []
    for seed in range(3):
        env.reset(seed=seed)
        results.append(play(env, lambda _env, rng=rng: int(rng.integers(DOMAIN.num_actions))))
    assert not any(results)


def test_random_pushes_rarely_meet_a_side_relation():
    """Uniformly random pushes met "A to a side of B" in 30-33 % of 50-push episodes; every task must
    keep chance success below 20 %."""
    results = []
    for task in DOMAIN.tasks["train"]:
        env = imaginebench.make("Ball-v0", level="train", task=task)
        rng = np.random.default_rng(0)
        for seed in range(50):
            env.reset(seed=seed)
            results.append(play(env, lambda _env, rng=rng: int(rng.integers(DOMAIN.num_actions))))
    assert np.mean(results) < 0.2


def test_distance_to_go_goes_around_the_reference_ball():
    """From in front of the green ball, the way behind it is longer than the straight line through it."""
    positions = np.array([[0.0, -0.1], [0.45, 0.55], [0.0, 0.2], [-0.45, 0.55], [0.45, -0.15]])
    behind = Goal("push-behind", (Relation(0, 2, "behind"),))
    straight = np.linalg.norm(positions[0] - (positions[2] + [0, 0.27]))
    assert distance_to_go(positions, positions, behind) > straight + 0.05
    assert distance_to_go(positions, positions, Goal("push-front", (Relation(0, 2, "front"),))) == 0.0
