"""The env contract's ``set_state`` across domains: offered exactly where the state vector
determines the simulator, it round-trips, refuses impossible states, and elsewhere says why not."""

import numpy as np
import pytest

import imaginebench
from imaginebench.envs.babyai.env import BabyAIEnv
from imaginebench.envs.base import ImagineBenchEnv
from imaginebench.envs.clevr.env import ClevrEnv
from imaginebench.envs.halfcheetah.env import HalfCheetahEnv
from imaginebench.envs.libero.env import LiberoEnv
from imaginebench.envs.metaworld.env import MetaWorldEnv
from imaginebench.registry import env_ids, get_domain

ENV_CLASSES: dict[str, type[ImagineBenchEnv]] = {
    "BabyAI-v0": BabyAIEnv,
    "Ball-v0": ClevrEnv,
    "Mujoco-v0": HalfCheetahEnv,
    "Libero-v0": LiberoEnv,
    "MetaWorld-v0": MetaWorldEnv,
}
"""Every domain's env class (LIBERO's imports without its simulator)."""

SETTABLE = ("BabyAI-v0", "Ball-v0", "Mujoco-v0")
"""Domains whose state vector determines the simulator (see each env's ``state_determines_simulator``)."""

pytestmark = pytest.mark.filterwarnings("ignore:Constant")  # Meta-World's package warns about its own gains


def test_every_domain_is_listed():
    assert sorted(ENV_CLASSES) == env_ids()


@pytest.mark.parametrize("env_id", sorted(ENV_CLASSES))
def test_set_state_is_offered_exactly_where_the_state_determines_the_simulator(env_id):
    env_class = ENV_CLASSES[env_id]
    assert env_class.env_id == env_id
    assert env_class.state_determines_simulator == (env_id in SETTABLE)
    assert (env_class.set_state is not ImagineBenchEnv.set_state) == env_class.state_determines_simulator
    assert env_class.state is not ImagineBenchEnv.state


def random_states(env, seed: int, steps: int) -> list[np.ndarray]:
    """States of one random-action episode (reset state first)."""
    env.action_space.seed(seed)
    states = [env.reset(seed=seed)[0]["state"]]
    for _ in range(steps):
        observation, _, terminated, truncated, _ = env.step(env.action_space.sample())
        states.append(observation["state"])
        if terminated or truncated:
            break
    return states


@pytest.mark.parametrize("env_id", SETTABLE)
def test_set_state_round_trips(env_id):
    env = imaginebench.make(env_id, level="train")
    states = random_states(env, seed=1, steps=30)
    env.reset(seed=2)
    for state in states:
        env.set_state(state)
        np.testing.assert_array_equal(env.state().astype(np.float32), state)
    env.close()


@pytest.mark.parametrize("env_id", SETTABLE)
def test_set_state_refuses_a_state_the_env_cannot_be_in(env_id):
    env = imaginebench.make(env_id, level="train")
    env.reset(seed=0)
    before = env.state()
    with pytest.raises(ValueError, match="cannot be in: state has non-finite numbers"):
        env.set_state(np.full(get_domain(env_id).state_dim, np.nan, dtype=np.float32))
    np.testing.assert_array_equal(env.state(), before)
    env.close()


def test_meta_world_says_its_state_cannot_be_set():
    env = imaginebench.make("MetaWorld-v0", level="train")
    state = env.reset(seed=0)[0]["state"]
    with pytest.raises(NotImplementedError, match="does not determine the simulator"):
        env.set_state(state)
    env.close()
