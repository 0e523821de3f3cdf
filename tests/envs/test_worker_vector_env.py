import multiprocessing
from functools import partial

import gymnasium as gym
import numpy as np
import pytest

from imaginebench.envs.worker_vector_env import WorkerFailedError, WorkerVectorEnv, _concatenate


class CountingEnv(gym.Env):
    """A seeded walk with infos some sub-envs set only now and then: the cases where joining blocks could differ
    from one ``SyncVectorEnv``. Module-level, so worker processes can build it."""

    observation_space = gym.spaces.Dict({"state": gym.spaces.Box(-np.inf, np.inf, (2,), np.float32)})
    action_space = gym.spaces.Discrete(3)

    def __init__(self, name: str, fail: bool = False) -> None:
        if fail:
            raise RuntimeError(f"cannot build {name}")
        self.name = name

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.position = float(self.np_random.integers(0, 3))
        return self.observe(), {"name": self.name}

    def step(self, action):
        self.position += float(action) - 1 + self.np_random.normal()
        info = {"is_success": self.position > 2}
        if info["is_success"]:
            info["at"] = np.array([self.position, -self.position])
        return self.observe(), self.position, bool(info["is_success"]), self.position < -3, info

    def observe(self) -> dict:
        return {"state": np.array([self.position, len(self.name)], np.float32)}


def test_blocks_in_workers_step_like_one_sync_vector_env():
    factories = [partial(CountingEnv, f"env-{'x' * k}") for k in range(5)]
    sync, workers = gym.vector.SyncVectorEnv(factories), WorkerVectorEnv(factories, workers=2)
    try:
        assert workers.observation_space == sync.observation_space and workers.action_space == sync.action_space
        expected, got = [sync.reset(seed=[7 + k for k in range(5)])], [workers.reset(seed=[7 + k for k in range(5)])]
        actions = np.random.default_rng(0).integers(0, 3, size=(20, 5))
        for action in actions:
            expected.append(sync.step(action))
            got.append(workers.step(action))
    finally:
        sync.close()
        workers.close()
    np.testing.assert_equal(got, expected)
    assert multiprocessing.active_children() == []


def test_a_worker_failure_names_the_block_and_leaves_no_process():
    factories = [partial(CountingEnv, "fine"), partial(CountingEnv, "broken", fail=True)]
    with pytest.raises(WorkerFailedError, match=r"worker 1 \(sub-envs 1-1\) failed:(.|\n)*cannot build broken"):
        WorkerVectorEnv(factories, workers=2)
    assert multiprocessing.active_children() == []


def test_keys_a_block_lacks_are_filled_as_sync_vector_env_fills_them():
    parts = [
        {"at": np.ones((2, 2)), "_at": np.ones(2, bool), "task": np.array(["a", "b"], object)},
        {"nested": {"x": np.array([3])}},
    ]
    joined = _concatenate(parts, [2, 1])
    np.testing.assert_equal(joined["at"], [[1, 1], [1, 1], [0, 0]])
    np.testing.assert_equal(joined["_at"], [True, True, False])
    np.testing.assert_equal(joined["task"], np.array(["a", "b", None], object))
    np.testing.assert_equal(joined["nested"]["x"], [0, 0, 3])
