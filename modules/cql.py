"""Conservative Q-Learning for continuous actions: Kumar, Zhou, Tucker & Levine (2020), "Conservative
Q-Learning for Offline Reinforcement Learning", NeurIPS, arXiv:2006.04779. Discrete actions:
:class:`modules.discrete_cql.DiscreteCQL`."""

from __future__ import annotations

import math
from typing import Any

import torch
from tensordict import TensorDictBase
from torchrl.envs.utils import ExplorationType, set_exploration_type
from torchrl.objectives import CQLLoss, ValueEstimators

from modules.base import OfflineRLModule
from modules.networks import (
    HIDDEN_SIZES,
    Activation,
    action_spec,
    observation,
    q_critic,
    tanh_normal_actor,
)


class PerStateCQLLoss(CQLLoss):
    """TorchRL's ``CQLLoss`` with the paper's conservative estimator, computed per state.

    TorchRL 0.14.1's ``cql_loss`` subtracts Q(s, a_data) of shape ``(B, 1)`` from log-sum-exps of
    shape ``(B·N,)``, which broadcasts to ``(B, B·N)``, takes each log-sum-exp over the three
    proposals of one sample rather than over all 3·N, scores actions drawn at s' at s', and runs the
    actor and the critics' state part on ``N`` copies of every state. This version draws the ``N``
    uniform and ``2·N`` policy actions (at s and at s') from one actor pass per state, scores all of
    them at s as Kumar et al.'s code does (the critic's first layer sees each state once, see
    :class:`~modules.networks.TwoInputMLP`), and returns a per-state penalty ``log Σ exp(Q − log density) − Q(s, a_data)``
    summed over the two critics (Eq. 4 with the importance-sampled estimator of Appendix F).
    """

    def __init__(self, *args, action_bound: float = 1.0, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.action_bound = action_bound

    def _policy_proposals(self, observation: TensorDictBase) -> tuple[torch.Tensor, torch.Tensor]:
        """``num_random`` actions per state from π(·|s), and their log-probabilities, from one actor pass."""
        with set_exploration_type(ExplorationType.RANDOM), self.actor_network_params.data.to_module(self.actor_network):
            dist = self.actor_network.get_dist(observation.select(*self.actor_network.in_keys, strict=False).copy())
            action = dist.rsample((self.num_random,))
            return action, dist.log_prob(action)

    def cql_loss(self, tensordict: TensorDictBase) -> tuple[torch.Tensor, dict]:
        pred_q = torch.cat(
            [tensordict.get(self.tensor_keys.pred_q1), tensordict.get(self.tensor_keys.pred_q2)], -1
        ).T  # (2, B)
        with torch.no_grad():
            current_action, current_log_prob = self._policy_proposals(tensordict)
            next_action, next_log_prob = self._policy_proposals(tensordict.get("next"))
        random_action = torch.empty_like(current_action).uniform_(-self.action_bound, self.action_bound)
        random_log_density = torch.full_like(
            current_log_prob, -current_action.shape[-1] * math.log(2 * self.action_bound)
        )
        actions = torch.cat([random_action, current_action, next_action])  # (3N, B, A)
        obs, critic = observation(tensordict), self.qvalue_network[-1].module  # a TwoInputMLP: obs broadcasts
        q_per_critic = []
        for index in range(self.num_qvalue_nets):
            with self.qvalue_network_params[index].to_module(self.qvalue_network):
                q_per_critic.append(critic(obs, actions).squeeze(-1))
        q = torch.stack(q_per_critic)  # (2, 3N, B)
        log_density = torch.cat([random_log_density, current_log_prob, next_log_prob])  # (3N, B)
        logsumexp = self.temperature * torch.logsumexp((q - log_density) / self.temperature, dim=1)  # (2, B)
        penalty = self.min_q_weight * (logsumexp - pred_q)
        tensordict.set(self.tensor_keys.cql_q1_loss, penalty[0])
        tensordict.set(self.tensor_keys.cql_q2_loss, penalty[1])
        return self._reduce_loss(penalty.sum(0), tensordict=tensordict), {}


class CQL(OfflineRLModule):
    """CQL(H) for continuous actions: SAC (a TanhNormal actor, two critics, a learned entropy temperature)
    plus ``conservative_weight · (log Σ_a exp Q(s, a) − Q(s, a_data))`` (Kumar et al. 2020, Eq. 4), the
    log-sum-exp estimated from ``num_action_samples`` uniform and policy actions per state, with d3rlpy CQL's
    defaults (weight 5, actor lr 1e-4, critic lr 3e-4, τ 0.005).

    Departures from the original benchmark, on purpose: TD targets are discounted by ``gamma`` (its d3rlpy
    path trained undiscounted targets); the conservative weight is fixed (d3rlpy also scales it by a learned
    Lagrange multiplier that starts at 1). The penalty comes from :class:`PerStateCQLLoss`, which replaces
    TorchRL 0.14.1's estimator (see there) by the paper's, per state, at the same number of critic
    evaluations. ``target_update_interval`` > 0 copies the critics' targets every that many updates; 0 (the
    default) moves them by ``tau`` after every update.
    """

    action_kinds = ("continuous",)
    other_action_kind = "modules.discrete_cql.DiscreteCQL"

    def __init__(
        self,
        env_spec: dict,
        gamma: float = 0.99,
        conservative_weight: float = 5.0,
        critic_lr: float = 3e-4,
        actor_lr: float = 1e-4,
        temperature_lr: float = 1e-4,
        num_action_samples: int = 10,
        target_update_interval: int = 0,
        tau: float = 0.005,
        hidden_sizes: tuple[int, ...] = HIDDEN_SIZES,
        activation: Activation = "relu",
        normalize_states: bool | None = None,
    ) -> None:
        super().__init__(env_spec, normalize_states)
        self.save_hyperparameters()
        self.policy = tanh_normal_actor(self.env_spec, hidden_sizes, activation)
        critics = [q_critic(self.env_spec, hidden_sizes, activation) for _ in range(2)]
        # min_q_weight 1: the conservative weight is applied in training_step.
        self.loss = PerStateCQLLoss(
            self.policy,
            critics,
            action_spec=action_spec(self.env_spec),
            loss_function="l2",
            min_q_weight=1.0,
            num_random=num_action_samples,
            action_bound=self.env_spec.action_bound,
        )
        self.loss.make_value_estimator(ValueEstimators.TD0, gamma=gamma)
        self.target_updater = self.make_target_updater(self.loss, target_update_interval, tau)

    def parameter_groups(self) -> list[dict[str, Any]]:
        return [
            {"params": self.loss.qvalue_network_params.values(True, True), "lr": self.hparams.critic_lr},
            {"params": self.loss.actor_network_params.values(True, True), "lr": self.hparams.actor_lr},
            {"params": [self.loss.log_alpha], "lr": self.hparams.temperature_lr},
        ]

    def losses(self, batch: TensorDictBase) -> TensorDictBase:
        return self.loss(batch)  # also writes the per-row TD error into the batch as "td_error"

    def training_step(self, batch: TensorDictBase, batch_idx: int) -> None:
        losses = self.losses(batch)
        # Eq. 4 (the Bellman error plus the weighted conservative gap) + Alg. 1 line 4: SAC's policy and
        # temperature updates.
        loss = losses["loss_qvalue"] + self.hparams.conservative_weight * losses["loss_cql"]
        self.gradient_step(loss + losses["loss_actor"] + losses["loss_alpha"])
        self.target_updater.step()
        self.log_train_metrics(losses)
        self.log_per_source("td_error", batch["td_error"], batch["source"])
