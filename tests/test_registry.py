"""The registry: a domain is found without its simulator, and ``gymnasium.make`` keeps ``get_dataset``
(every domain's configs are checked by ``tests/envs/test_domain_contract.py``)."""

from __future__ import annotations

import subprocess
import sys

import gymnasium as gym
import numpy as np

import imaginebench
from tests.data_roots import REAL_EPISODES


def test_a_domains_config_folder_is_known_without_its_simulator():
    probe = (
        "import sys; from imaginebench.registry import get_domain; print(get_domain('Libero-v0').config_dir); "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'libero', 'robosuite'}))"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["libero", "[]"]


def test_gymnasium_make_keeps_the_env_checker_and_forwards_get_dataset(babyai_data_root, shipped_tiny_model):
    wrapped = gym.make("imaginebench/BabyAI-v0", level="easy")
    stack, env = [], wrapped
    while isinstance(env, gym.Wrapper):
        stack.append(type(env).__name__)
        env = env.env
    assert "PassiveEnvChecker" in stack and "OrderEnforcing" in stack
    real, imaginary = wrapped.get_dataset()
    assert real["observations"].shape[0] == REAL_EPISODES and imaginary is not None
    assert wrapped.get_dataset(level="train")[1] is None
    assert (
        gym.make(wrapped.spec).get_dataset()[1]["observations"].shape == imaginary["observations"].shape
    )  # remade from its spec

    bare = imaginebench.make("BabyAI-v0", level="easy")
    pairs = [(wrapped.reset(seed=5), bare.reset(seed=5))] + [(wrapped.step(k % 3), bare.step(k % 3)) for k in range(6)]
    for a, b in pairs:
        np.testing.assert_array_equal(a[0]["state"], b[0]["state"])
        assert a[1:] == b[1:]
