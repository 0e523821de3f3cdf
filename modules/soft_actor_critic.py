"""The soft actor-critic both conservative learners build on: Haarnoja, Zhou, Abbeel & Levine (2018), "Soft
Actor-Critic", ICML, arXiv:1801.01290, with the learned temperature of Haarnoja et al. (2018), arXiv:1812.05905.

Written on the networks' tensors for CQL and COMBO: TorchRL's ``SACLoss`` and ``CQLLoss`` run the twin critics
through vmap over parameters swapped into one module at every call, which on a CPU at batch 256 cost a large share
of an update (docs/algorithms.md#speed); here both critics are one :class:`~modules.networks.MLPEnsemble`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch
from torch import Tensor, nn

from modules.base import OfflineRLModule
from modules.networks import (
    HIDDEN_SIZES,
    Activation,
    MLPEnsemble,
    TargetNetworks,
    tanh_normal_actor,
    tanh_normal_distribution,
)
from modules.tanh_gaussian import TanhGaussian


class SoftActorCritic(OfflineRLModule):
    """A TanhNormal actor, twin critics (one stacked ensemble) with target copies, and a learned entropy
    temperature α (starting at 1, target entropy ``−|A|``), with SAC's losses on tensors. Subclasses add
    their critic regulariser and call :meth:`gradient_step` once per batch.

    Subclasses save ``actor_lr``, ``critic_lr`` and ``temperature_lr`` (and ``gamma``) as hyperparameters.
    """

    action_kinds = ("continuous",)

    def __init__(
        self,
        env_spec: dict,
        normalize_states: bool | None,
        hidden_sizes: Sequence[int] = HIDDEN_SIZES,
        activation: Activation = "relu",
        tau: float = 0.005,
        target_update_interval: int = 0,
    ) -> None:
        super().__init__(env_spec, normalize_states)
        spec = self.env_spec
        self.policy = self.actor = tanh_normal_actor(spec, hidden_sizes, activation)
        self.critics = MLPEnsemble(2, spec, spec.action_dim, 1, hidden_sizes, activation)
        self.log_alpha = nn.Parameter(torch.zeros(()))
        self.targets = TargetNetworks(critics=self.critics)
        self.target_updater = self.make_target_updater(self.targets, target_update_interval, tau)

    def parameter_groups(self) -> list[dict[str, Any]]:
        return [
            {"params": self.actor.parameters(), "lr": self.hparams.actor_lr},
            {"params": self.critics.parameters(), "lr": self.hparams.critic_lr},
            {"params": [self.log_alpha], "lr": self.hparams.temperature_lr},
        ]

    def action_distribution(self, obs: Tensor) -> TanhGaussian:
        """π(·|s) from the concatenated observation, as the actor's ``get_dist`` builds it."""
        return tanh_normal_distribution(self.actor, self.env_spec, obs)

    @staticmethod
    def sample(distribution: TanhGaussian, samples: int | None = None) -> tuple[Tensor, Tensor]:
        """Reparameterised actions (``(samples, B, A)``, or ``(B, A)`` for ``None``) and their log-probabilities,
        scored on the Gaussian draw itself: recomputing it from a saturated action would not invert tanh."""
        return distribution.rsample_and_log_prob(() if samples is None else (samples,))

    def target_value(self, next_obs: Tensor, distribution: TanhGaussian, entropy_bonus: bool) -> Tensor:
        """``min_i Q'_i(s', a')`` with ``a' ~ π(·|s')`` drawn from ``distribution`` (π at s'), minus
        ``α log π(a'|s')`` when ``entropy_bonus``; ``(B,)``, without gradient."""
        with torch.no_grad(), self.targets.target("critics"):
            next_action, next_log_prob = self.sample(distribution)
            value = self.critics(next_obs, next_action).min(0).values.squeeze(-1)
            return value - self.log_alpha.exp() * next_log_prob if entropy_bonus else value

    def data_and_proposal_values(
        self, obs: Tensor, data_action: Tensor, proposals: list[tuple[Tensor, Tensor]]
    ) -> tuple[Tensor, Tensor]:
        """The conservative regulariser's two terms, from one pass of the critics at s, ``(critics, B)`` each: Q at
        the data's actions, and ``log Σ exp(Q − log density)`` over uniform actions (drawn here, as many per state
        as the first group of ``proposals``) and the policy's ``proposals``, ``(actions (N, B, A), log π (N, B))``
        groups drawn before (CQL(H)'s importance-sampled estimator, Kumar et al. 2020, Appendix F)."""
        bound = self.env_spec.action_bound
        uniform_action = torch.empty_like(proposals[0][0]).uniform_(-bound, bound)
        uniform_log_density = torch.full_like(proposals[0][1], -self.env_spec.action_dim * math.log(2 * bound))
        actions = torch.cat([data_action.unsqueeze(0), uniform_action, *(action for action, _ in proposals)])
        q_values = self.critics(obs, actions).squeeze(-1)  # (critics, 1 + proposals, B)
        log_density = torch.cat([uniform_log_density, *(log_prob for _, log_prob in proposals)])
        return q_values[:, 0], torch.logsumexp(q_values[:, 1:] - log_density, dim=1)

    def actor_and_temperature_losses(self, obs: Tensor, action: Tensor, log_prob: Tensor) -> tuple[Tensor, Tensor]:
        """Per row: the actor's ``α log π(a|s) − min_i Q_i(s, a)`` for ``a ~ π(·|s)``, through the critics'
        detached weights (the critics get no gradient from it) and a detached α; and the temperature's
        ``−log α · (log π(a|s) + target entropy)`` with target entropy ``−|A|``."""
        q_value = self.critics(obs, action, frozen=True).min(0).values.squeeze(-1)
        loss_actor = self.log_alpha.detach().exp() * log_prob - q_value
        loss_alpha = -self.log_alpha * (log_prob.detach() - self.env_spec.action_dim)
        return loss_actor, loss_alpha
