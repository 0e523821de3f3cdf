"""``imagined_rewards`` across domains: recomputed from a real episode's recorded states and actions, it gives
the rewards the env paid, except Meta-World's, which are sparse by design (docs/datasets.md#imaginary-rewards)."""

import numpy as np
import pytest

import imaginebench
from imaginebench.registry import get_domain
from tests.envs.expert_episode import Episode, record_episode

pytestmark = pytest.mark.filterwarnings("ignore:Constant")  # Meta-World's package warns about its own gains


def imagined(env, episode: Episode) -> np.ndarray:
    """The episode's rewards as imagination computes them: success judged on the states, as for generated ones."""
    success = env.success_flags(episode.states)
    np.testing.assert_array_equal(success, episode.success)
    return env.imagined_rewards(episode.states, episode.actions, success)


@pytest.mark.parametrize(
    ("env_id", "level", "task"),
    [
        ("BabyAI-v0", "train", "PickUp"),
        ("BabyAI-v0", "hard", "OpenLock"),
        ("Ball-v0", "train", "push-left"),
        ("Ball-v0", "hard", "two-relations"),
    ],
)
def test_sparse_domains_imagine_the_rewards_of_expert_episodes(env_id, level, task):
    env = imaginebench.make(env_id, level=level)
    episode = record_episode(env, get_domain(env_id).expert(), seed=3, task=task)
    assert episode.success[-1] and episode.rewards[-1] > 0
    np.testing.assert_array_equal(imagined(env, episode), episode.rewards)


@pytest.mark.parametrize("level", ["train", "easy", "hard"])
def test_halfcheetah_imagines_its_dense_rewards_from_the_states(level):
    pytest.importorskip("mujoco")
    env = imaginebench.make("Mujoco-v0", level=level)
    rng = np.random.default_rng(0)

    def policy(_env) -> np.ndarray:  # beyond [-1, 1] too: the control cost is of the clipped action
        return rng.uniform(-1.5, 1.5, 6).astype(np.float32)

    for task in env.tasks:
        episode = record_episode(env, policy, seed=1, task=task, max_steps=30)
        rewards = imagined(env, episode)
        np.testing.assert_allclose(rewards, episode.rewards, rtol=1e-5, atol=1e-5, err_msg=task)
    env.close()


def test_metaworld_imagines_only_the_success_reward():
    env = imaginebench.make("MetaWorld-v0", level="train")
    episode = record_episode(env, get_domain("MetaWorld-v0").expert(), seed=0, task="reach")
    assert episode.success[-1] and np.count_nonzero(episode.rewards[:-1])  # dense shaping before the success
    rewards = imagined(env, episode)
    assert rewards[-1] == episode.rewards[-1] == 10.0 and not np.any(rewards[:-1])
    env.close()
