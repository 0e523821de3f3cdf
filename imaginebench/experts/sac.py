"""Soft actor-critic (Haarnoja et al. 2018, learned temperature) from TorchRL pieces, for training
experts on any gymnasium env with Box observations and actions in [-1, 1].

The loop is deliberately plain: act in one env, add transitions to a TorchRL replay buffer in
chunks, and make one ``SACLoss`` update per env step; a learned expert is cheap to reproduce on a CPU.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import gymnasium as gym
import numpy as np
import torch
from tensordict import TensorDict
from tensordict.nn import TensorDictModule
from torchrl.data import Bounded, LazyTensorStorage, TensorDictReplayBuffer
from torchrl.envs.utils import ExplorationType, set_exploration_type
from torchrl.modules import MLP, ProbabilisticActor, TanhNormal, ValueOperator
from torchrl.objectives import SACLoss, SoftUpdate, ValueEstimators

from imaginebench.experts.policy import gaussian_policy_net


@dataclass
class SACConfig:
    steps: int = 15_000
    """Env steps (one update per step after ``warmup``)."""
    warmup: int = 2_000
    """Uniformly random steps before learning starts."""
    batch_size: int = 128
    """Transitions per update, each used once per skill."""
    hidden_sizes: tuple[int, ...] = (128, 128)
    lr: float = 1e-3
    """Higher than the usual 3e-4, with a small initial temperature: experts must learn in minutes."""
    alpha_init: float = 0.1
    gamma: float = 0.99
    tau: float = 0.005
    chunk: int = 50
    """Env steps between replay-buffer writes (then as many updates)."""
    log_every: int = 2_000


def build_loss(observation_dim: int, action_dim: int, config: SACConfig) -> tuple[SACLoss, torch.nn.Module]:
    """TorchRL's SAC loss over a TanhNormal actor and two Q networks; returns the loss and the
    actor's bare network (what a checkpoint stores)."""
    net = gaussian_policy_net(observation_dim, action_dim, config.hidden_sizes)
    actor = ProbabilisticActor(
        TensorDictModule(net, in_keys=["observation"], out_keys=["loc", "scale"]),
        in_keys=["loc", "scale"],
        spec=Bounded(-1.0, 1.0, shape=(action_dim,)),
        distribution_class=TanhNormal,
        distribution_kwargs={"low": -1.0, "high": 1.0},
    )
    q_net = MLP(
        in_features=observation_dim + action_dim,
        out_features=1,
        num_cells=list(config.hidden_sizes),
        activation_class=torch.nn.ReLU,
    )
    critic = ValueOperator(q_net, in_keys=["observation", "action"])
    loss = SACLoss(actor, critic, num_qvalue_nets=2, loss_function="l2", alpha_init=config.alpha_init)
    loss.make_value_estimator(ValueEstimators.TD0, gamma=config.gamma)
    return loss, net


def skills_of(env: gym.Env) -> tuple[str, ...]:
    """The skills an env pays rewards for: its ``skills`` attribute (with ``info["skill_rewards"]``
    from ``step``), or one unnamed skill paid by the env's own reward."""
    return tuple(getattr(env, "skills", ("",)))


def with_skill(observations: torch.Tensor, skill: int, num_skills: int) -> torch.Tensor:
    """``observation ⊕ one-hot(skill)``: the policy and critic input."""
    one_hot = torch.zeros(*observations.shape[:-1], num_skills, dtype=observations.dtype)
    one_hot[..., skill] = 1.0
    return torch.cat([observations, one_hot], dim=-1)


def _transitions(observations, actions, rewards, next_observations, terminated) -> TensorDict:
    n = len(actions)
    as_tensor = lambda x: torch.as_tensor(np.asarray(x), dtype=torch.float32)  # noqa: E731
    return TensorDict(
        {
            "observation": as_tensor(observations),
            "action": as_tensor(actions),
            "rewards": as_tensor(rewards).reshape(n, -1),
            "next_observation": as_tensor(next_observations),
            "terminated": torch.as_tensor(np.asarray(terminated)).reshape(n, 1),
        },
        batch_size=[n],
    )


def relabelled(batch: TensorDict, num_skills: int) -> TensorDict:
    """Every sampled transition once per skill, with that skill's reward: rewards are functions
    of the transition, so each skill learns from all the data (hindsight relabelling)."""
    parts = []
    for k in range(num_skills):
        done = batch["terminated"].bool()
        parts.append(
            TensorDict(
                {
                    "observation": with_skill(batch["observation"], k, num_skills),
                    "action": batch["action"],
                    "next": {
                        "observation": with_skill(batch["next_observation"], k, num_skills),
                        "reward": batch["rewards"][:, k : k + 1],
                        "done": done,
                        "terminated": done,
                    },
                },
                batch_size=batch.batch_size,
            )
        )
    return torch.cat(parts)


def evaluate(env: gym.Env, act: Callable[[np.ndarray, int], np.ndarray], episodes: int, seed: int) -> list[float]:
    """Mean return of ``act`` per skill over ``episodes`` episodes each (reset seeds ``seed + k``)."""
    skills = skills_of(env)
    means = []
    for skill in range(len(skills)):
        returns = []
        for k in range(episodes):
            observation, _ = env.reset(seed=seed + k)
            total, done = 0.0, False
            while not done:
                observation, reward, terminated, truncated, info = env.step(act(observation, skill))
                total += float(info["skill_rewards"][skill]) if "skill_rewards" in info else float(reward)
                done = terminated or truncated
            returns.append(total)
        means.append(float(np.mean(returns)))
    return means


def train_sac(
    env: gym.Env,
    config: SACConfig,
    seed: int,
    log: Callable[[str], None] = print,
    on_log: Callable[[torch.nn.Module, int], None] | None = None,
) -> torch.nn.Module:
    """Train one actor for every skill of ``env`` (see :func:`skills_of`) for ``config.steps`` env
    steps, episode ``i`` exploring skill ``i mod K``; returns the actor network (input: observation
    ⊕ one-hot skill; output: loc, scale). ``on_log(actor, step)`` runs at every log line (e.g. to
    keep a checkpoint of a long run)."""
    torch.manual_seed(seed)
    env.action_space.seed(seed)
    num_skills = len(skills_of(env))
    observation_dim, action_dim = env.observation_space.shape[0], env.action_space.shape[0]
    loss, net = build_loss(observation_dim + num_skills, action_dim, config)
    optimizer = torch.optim.Adam(loss.parameters(), lr=config.lr)
    target_update = SoftUpdate(loss, tau=config.tau)
    buffer = TensorDictReplayBuffer(storage=LazyTensorStorage(config.steps), batch_size=config.batch_size)
    explore = loss.actor_network

    observation, _ = env.reset(seed=seed)
    chunk: list[list] = [[], [], [], [], []]
    episode, episode_return, returns, start = 0, 0.0, [[] for _ in range(num_skills)], time.perf_counter()
    for step in range(config.steps):
        skill = episode % num_skills
        if step < config.warmup:
            action = env.action_space.sample()
        else:
            with torch.no_grad(), set_exploration_type(ExplorationType.RANDOM):
                policy_input = with_skill(torch.as_tensor(observation, dtype=torch.float32), skill, num_skills)
                action = explore(TensorDict({"observation": policy_input}))["action"].numpy()
        next_observation, reward, terminated, truncated, info = env.step(action)
        rewards = info.get("skill_rewards", [reward])
        for column, value in zip(chunk, (observation, action, rewards, next_observation, terminated)):
            column.append(value)
        episode_return += float(rewards[skill])
        observation = next_observation
        if terminated or truncated:
            returns[skill].append(episode_return)
            episode, episode_return = episode + 1, 0.0
            observation, _ = env.reset()
        if len(chunk[0]) == config.chunk:
            buffer.extend(_transitions(*chunk))
            chunk = [[], [], [], [], []]
            if step >= config.warmup:
                for _ in range(config.chunk):
                    _update(loss, optimizer, target_update, relabelled(buffer.sample(), num_skills))
        if (step + 1) % config.log_every == 0:
            recent = ", ".join(f"{np.mean(r[-3:]):.1f}" if r else "-" for r in returns)
            log(
                f"step {step + 1}: return per skill {recent} (last 3 episodes each), {time.perf_counter() - start:.0f} s"
            )
            if on_log is not None:
                on_log(net, step + 1)
    return net


def _update(loss: SACLoss, optimizer: torch.optim.Optimizer, target_update: SoftUpdate, batch: TensorDict) -> None:
    """One step on actor, critics and temperature together: SACLoss detaches what each part must not move."""
    losses = loss(batch)
    total = losses["loss_actor"] + losses["loss_qvalue"] + losses["loss_alpha"]
    optimizer.zero_grad()
    total.backward()
    optimizer.step()
    target_update.step()
