import multiprocessing

import numpy as np
import pytest
import torch

import imaginebench.evaluation as evaluation_module
from callbacks.evaluation import SuccessRateEvaluation
from imaginebench.evaluation import ActFn, EvaluationEnvs, evaluate_level
from imaginebench.registry import get_domain

pytestmark = pytest.mark.filterwarnings("ignore:Constant")  # Meta-World's package warns about its own gains


def state_keyed_act(env_id: str) -> ActFn:
    """A fixed policy that still acts differently in every state: its action is a function of the state alone."""
    domain = get_domain(env_id)

    def act(state: torch.Tensor, instruction_embedding: torch.Tensor) -> torch.Tensor:
        key = (state.abs().sum(dim=1) * 1000).floor().long()
        if domain.action_kind == "discrete":
            return key % domain.num_actions
        return torch.sin(key[:, None].double() + torch.arange(domain.action_dim)).float()

    return act


class Spawned(Exception):
    """Raised instead of starting workers, where a test only asks how many evaluation would start."""


@pytest.mark.parametrize(
    ("env_id", "level", "episodes_per_task"), [("Ball-v0", "train", 2), ("MetaWorld-v0", "hard", 1)]
)
def test_workers_give_the_in_process_result(env_id, level, episodes_per_task, monkeypatch):
    in_process = evaluate_level(state_keyed_act(env_id), env_id, level, episodes_per_task, seed=5, workers=1)
    started = []

    class RecordedWorkerVectorEnv(evaluation_module.WorkerVectorEnv):
        def __init__(self, env_fns, workers):
            started.append(workers)
            super().__init__(env_fns, workers)

    monkeypatch.setattr(evaluation_module, "WorkerVectorEnv", RecordedWorkerVectorEnv)
    in_workers = evaluate_level(state_keyed_act(env_id), env_id, level, episodes_per_task, seed=5, workers=2)
    assert started == [2]
    assert in_workers.to_dict() == in_process.to_dict()
    assert multiprocessing.active_children() == []


def test_clevr_episodes_differ_so_the_comparison_sees_masking():
    result = evaluate_level(state_keyed_act("Ball-v0"), "Ball-v0", "train", 2, seed=5, workers=1)
    assert len({task.mean_length for task in result.per_task.values()}) > 1


@pytest.fixture
def started_workers(monkeypatch) -> list[int]:
    """The worker counts evaluation asks for, on a machine of 3 cores, without starting any worker."""
    started = []

    def record(env_fns, workers):
        started.append(workers)
        raise Spawned

    monkeypatch.setattr(evaluation_module, "WorkerVectorEnv", record)
    monkeypatch.setattr(evaluation_module, "available_cores", lambda: 3)
    return started


def test_by_default_a_simulator_domain_evaluates_in_one_worker_per_core(started_workers):
    assert get_domain("MetaWorld-v0").evaluation_in_subprocesses
    with pytest.raises(Spawned):
        evaluate_level(state_keyed_act("MetaWorld-v0"), "MetaWorld-v0", "hard", 1, seed=0)
    assert started_workers == [3]


def test_by_default_a_grid_world_evaluates_in_process(started_workers):
    assert not get_domain("BabyAI-v0").evaluation_in_subprocesses
    evaluate_level(state_keyed_act("BabyAI-v0"), "BabyAI-v0", "hard", 1, seed=0)
    assert started_workers == []


@pytest.mark.parametrize("workers", [0, -2])
def test_fewer_than_one_worker_is_refused_in_one_line(workers):
    message = rf"^workers must be >= 1, got {workers}$"
    with pytest.raises(ValueError, match=message):
        evaluate_level(state_keyed_act("BabyAI-v0"), "BabyAI-v0", "train", 1, seed=0, workers=workers)
    with pytest.raises(ValueError, match=message):
        SuccessRateEvaluation(workers=workers)


def test_a_failing_policy_leaves_no_worker_running():
    def act(state: torch.Tensor, instruction_embedding: torch.Tensor) -> torch.Tensor:
        raise RuntimeError("policy crashed")

    with pytest.raises(RuntimeError, match="policy crashed"):
        evaluate_level(act, "Ball-v0", "hard", 1, seed=0, workers=2)
    assert multiprocessing.active_children() == []


@pytest.mark.parametrize(("env_id", "workers"), [("BabyAI-v0", 1), ("MetaWorld-v0", 2)])
def test_kept_envs_of_several_levels_give_each_level_its_own_evaluation_every_time(env_id, workers):
    """Reusing the envs across evaluations, and stepping every level in one vector env, changes no result."""
    levels = ["easy", "hard"]
    act = state_keyed_act(env_id)
    alone = {level: evaluate_level(act, env_id, level, 1, seed=5, workers=1).to_dict() for level in levels}
    with EvaluationEnvs(env_id, levels, 1, workers=workers) as envs:
        for _ in range(2):
            together = envs.evaluate(act, seed=5)
            assert {level: result.to_dict() for level, result in together.items()} == alone
        other_seed = envs.evaluate(act, seed=6)
    assert multiprocessing.active_children() == []
    if env_id == "MetaWorld-v0":  # dense returns: other starts show (BabyAI's fixed policy fails from any start)
        assert {level: result.to_dict() for level, result in other_seed.items()} != alone


def test_the_callback_closes_its_kept_workers_when_the_stage_ends():
    callback = SuccessRateEvaluation(levels=["hard"], episodes_per_task=1, workers=2)
    callback._envs = EvaluationEnvs("Ball-v0", ["hard"], 1, workers=2)
    assert len(multiprocessing.active_children()) == 2
    callback.teardown(None, None, "fit")
    assert callback._envs is None and multiprocessing.active_children() == []


@pytest.mark.parametrize(("env_id", "level"), [("MetaWorld-v0", "hard"), ("Ball-v0", "train")])
@pytest.mark.parametrize("max_envs", [1, 64])
def test_every_episode_is_scored_as_playing_it_alone_gives(env_id, level, max_envs):
    """Sub-envs play runs of episodes back to back (max_envs 1: one sub-env per task plays them all) and idle
    once done: each episode's result is what it gives when played alone, from the same seed and start, to its
    end. (Ball-v0's episodes end at different steps: test_clevr_episodes_differ_so_the_comparison_sees_masking.)"""
    from imaginebench.evaluation import _stored_starts
    from imaginebench.registry import make

    act, episodes, seed = state_keyed_act(env_id), 3, 5
    domain = get_domain(env_id)
    expected, k = {}, 0
    for task in domain.tasks[level]:
        outcomes = []
        for start in _stored_starts(domain, level, task, episodes):
            env = make(env_id, level, task=task)
            obs, _ = env.reset(seed=seed + k, options=start)
            k += 1
            total, length, done = 0.0, 0, False
            while not done:
                action = act(torch.as_tensor(obs["state"])[None], torch.as_tensor(obs["instruction_embedding"])[None])
                obs, reward, terminated, truncated, info = env.step(action[0].numpy())
                total, length, done = total + reward, length + 1, terminated or truncated
            outcomes.append((bool(info["is_success"]), total, length))
        expected[task] = outcomes
    with EvaluationEnvs(env_id, [level], episodes, workers=1, max_envs=max_envs) as envs:
        assert envs.envs.num_envs == (len(expected) if max_envs == 1 else len(expected) * episodes)
        result = envs.evaluate(act, seed)[level]
    for task, outcomes in expected.items():
        measured = result.per_task[task]
        assert measured.success_rate == pytest.approx(np.mean([o[0] for o in outcomes]))
        assert measured.mean_return == pytest.approx(np.mean([o[1] for o in outcomes]))
        assert measured.mean_length == pytest.approx(np.mean([o[2] for o in outcomes]))
