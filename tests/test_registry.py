"""The registry: every env's configs are found from its domain, and ``gymnasium.make`` keeps ``get_dataset``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import yaml

import imaginebench
from imaginebench.registry import env_ids, get_domain
from tests.data_roots import REAL_EPISODES

CONFIGS = Path(__file__).resolve().parents[1] / "lightning_config"
PIPELINE_ALGO = "bc"
"""``imaginebench pipeline``'s default ``--algo``: every env needs it."""
GROUNDING_CONFIG_PENDING = {"MetaWorld-v0", "Mujoco-v0", "Libero-v0"}
"""Envs without a grounding config yet: strict xfails, so each flips to a failure (remove it here) once its config lands."""


def read_yaml(path: Path) -> dict:
    assert path.is_file(), f"missing {path}"
    return yaml.safe_load(path.read_text())


@pytest.mark.parametrize("env_id", env_ids())
def test_every_env_has_a_data_config_agreeing_with_its_domain(env_id):
    domain = get_domain(env_id)
    data = read_yaml(CONFIGS / domain.config_dir / "data.yaml")
    assert data["env_id"] == env_id, f"{CONFIGS / domain.config_dir / 'data.yaml'}: env_id {data['env_id']!r}"
    assert data["collect_if_missing"] == domain.real_episodes, (
        f"{CONFIGS / domain.config_dir / 'data.yaml'}: collect_if_missing differs from Domain.real_episodes"
    )
    assert data["real_levels"] == ["train"] and not data.get("real"), (
        f"{CONFIGS / domain.config_dir / 'data.yaml'}: not the default real data of the train level"
    )


@pytest.mark.parametrize("env_id", env_ids())
def test_every_env_has_algorithm_configs_including_the_pipeline_default(env_id):
    folder = CONFIGS / get_domain(env_id).config_dir
    algorithms = {path.stem: read_yaml(path) for path in sorted(folder.glob("*.yaml")) if "model" in read_yaml(path)}
    assert PIPELINE_ALGO in algorithms, (
        f"missing {folder / f'{PIPELINE_ALGO}.yaml'} (algorithm configs there: {sorted(algorithms)})"
    )
    for name, config in algorithms.items():
        assert (folder / config["data"]).is_file(), f"{folder / f'{name}.yaml'}: data {config['data']!r} does not exist"


@pytest.mark.parametrize(
    "env_id",
    [
        pytest.param(env_id, marks=pytest.mark.xfail(strict=True, reason="no grounding config yet"))
        if env_id in GROUNDING_CONFIG_PENDING
        else env_id
        for env_id in env_ids()
    ],
)
def test_every_env_has_a_grounding_config(env_id):
    domain = get_domain(env_id)
    path = CONFIGS.parent / domain.grounding_config
    data = read_yaml(path)["data"]
    assert data["env_id"] == env_id, f"{path}: data.env_id {data['env_id']!r}"
    assert data.get("collect_if_missing", domain.real_episodes) == domain.real_episodes, (
        f"{path}: collect_if_missing differs from Domain.real_episodes"
    )
    assert data["real_levels"] == ["train"] and not data.get("real"), (
        f"{path}: not the default real data of the train level"
    )


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
