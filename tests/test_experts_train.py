"""The SAC expert trainer: a short seeded run learns, and the command writes a loadable checkpoint."""

import gymnasium as gym
import numpy as np
import pytest
import torch
from tensordict import TensorDict

from imaginebench.experts.policy import MeanAction, load_policy
from imaginebench.experts.sac import SACConfig, evaluate, relabelled, train_sac
from imaginebench.experts.train import experts_main


class ReachTarget(gym.Env):
    """Reward -(a - target)² for a target the observation shows; 5 steps per episode."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float64)
    action_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.steps, self.target = 0, float(self.np_random.uniform(-0.8, 0.8))
        return self._observation(), {}

    def _observation(self):
        return np.array([self.target, 1.0])

    def step(self, action):
        self.steps += 1
        reward = -float((np.asarray(action).reshape(-1)[0] - self.target) ** 2)
        return self._observation(), reward, False, self.steps >= 5, {}


def test_a_few_hundred_sac_updates_raise_the_return():
    config = SACConfig(steps=600, warmup=200, batch_size=64, hidden_sizes=(32, 32), chunk=20, lr=3e-3, log_every=10**9)
    untrained = train_sac(ReachTarget(), SACConfig(steps=1, warmup=1, hidden_sizes=(32, 32)), seed=0)
    trained = train_sac(ReachTarget(), config, seed=0)
    [before] = evaluate(ReachTarget(), MeanAction(untrained, 1), episodes=20, seed=1)
    [after] = evaluate(ReachTarget(), MeanAction(trained, 1), episodes=20, seed=1)
    assert after > before + 0.5 and after > -0.5


def test_relabelling_pays_each_skill_its_own_reward():
    batch = TensorDict(
        {
            "observation": torch.zeros(4, 3),
            "action": torch.zeros(4, 1),
            "next_observation": torch.ones(4, 3),
            "rewards": torch.arange(8.0).reshape(4, 2),
            "terminated": torch.zeros(4, 1, dtype=torch.bool),
        },
        batch_size=[4],
    )
    out = relabelled(batch, 2)
    assert out.batch_size == torch.Size([8])
    assert out["next", "reward"].flatten().tolist() == [0.0, 2.0, 4.0, 6.0, 1.0, 3.0, 5.0, 7.0]
    assert (
        out["observation"][:4, 3:].tolist() == [[1.0, 0.0]] * 4
        and out["next", "observation"][4:, 3:].tolist() == [[0.0, 1.0]] * 4
    )


def test_experts_train_writes_a_checkpoint_with_its_command(tmp_path):
    pytest.importorskip("mujoco")
    out = tmp_path / "skills.pt"
    experts_main(
        [
            "train",
            "--env",
            "Mujoco-v0",
            "--skills",
            "run-forward,jump-forward",
            "--seed",
            "3",
            "--steps",
            "60",
            "--warmup",
            "50",
            "--eval-episodes",
            "1",
            "--out",
            str(out),
        ]
    )
    policy = load_policy(out)
    assert (
        policy.info["seed"] == 3
        and policy.info["steps_done"] == 60
        and policy.info["skills"] == ["run-forward", "jump-forward"]
    )
    assert policy.info["command"].startswith(
        "imaginebench experts train --env Mujoco-v0 --skills run-forward,jump-forward"
    )
    action = policy(np.zeros(18), skill=1)
    assert action.shape == (6,) and np.all(np.abs(action) <= 1.0)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--env", "Nope-v0"], "--env"),
        (["--env", "BabyAI-v0"], "--env"),
        (["--env", "Mujoco-v0", "--skills", "fly"], "--skills"),
        (["--env", "Mujoco-v0", "--steps", "10"], "--warmup"),
    ],
)
def test_bad_options_are_named(argv, message):
    with pytest.raises(SystemExit, match=message):
        experts_main(["train", *argv])
