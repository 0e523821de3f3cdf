import numpy as np
import pytest
import torch

import imaginebench
from imaginebench.envs.clevr import DOMAIN
from imaginebench.envs.clevr.evaluation_set import EPISODES_PER_TASK, SEED, evaluation_starts, generate, stored
from imaginebench.envs.clevr.layout import state_violations
from imaginebench.envs.clevr.tasks import Goal, is_success
from imaginebench.evaluation import evaluate_level
from imaginebench.levels import LEVELS


def test_stored_fixture_is_what_the_seed_generates():
    assert stored() == generate(SEED, EPISODES_PER_TASK)


def test_generation_depends_on_the_seed_only():
    assert generate(7, 2) == generate(7, 2) != generate(8, 2)


def test_every_task_has_the_same_number_of_valid_episodes():
    for level in LEVELS:
        texts = set(DOMAIN.instruction_texts(level))
        for task in DOMAIN.tasks[level]:
            starts = evaluation_starts(level, task)
            assert len(starts) == EPISODES_PER_TASK
            for options in starts:
                entry = options["start"]
                goal = Goal.from_json(entry["goal"])
                positions = np.asarray(entry["positions"])
                assert goal.task == task and entry["instruction"] in texts
                assert state_violations(positions.reshape(-1)) == [] and not is_success(positions, positions, goal)


def test_reset_from_an_entry_reproduces_it():
    env = imaginebench.make("Ball-v0", level="hard")
    options = evaluation_starts("hard", "gather")[3]
    obs, info = env.reset(seed=123, options=options)
    np.testing.assert_allclose(obs["state"], np.asarray(options["start"]["positions"]).reshape(-1), atol=1e-6)
    assert info["instruction"] == options["start"]["instruction"] and info["task"] == "gather"


def test_evaluation_starts_every_episode_from_the_stored_set():
    seen = []

    def act(state, embedding):
        seen.append(state.clone())
        return torch.zeros(len(state), dtype=torch.int64)

    result = evaluate_level(act, "Ball-v0", "easy", episodes_per_task=2, seed=0)
    expected = [
        np.asarray(o["start"]["positions"]).reshape(-1)
        for task in DOMAIN.tasks["easy"]
        for o in evaluation_starts("easy", task)[:2]
    ]
    np.testing.assert_allclose(seen[0].numpy(), np.stack(expected), atol=1e-6)
    assert set(result.per_task) == set(DOMAIN.tasks["easy"]) and all(r.episodes == 2 for r in result.per_task.values())


def test_asking_for_more_episodes_than_stored_is_an_error():
    with pytest.raises(ValueError, match="episodes_per_task=31, but the evaluation set of easy/step-behind holds 30"):
        evaluate_level(
            lambda s, e: torch.zeros(len(s), dtype=torch.int64), "Ball-v0", "easy", episodes_per_task=31, seed=0
        )
