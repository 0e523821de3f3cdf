"""TD3+BC: Fujimoto & Gu (2021), "A Minimalist Approach to Offline Reinforcement Learning",
NeurIPS, arXiv:2106.06860."""

from __future__ import annotations

from typing import Any

import torch
from tensordict import TensorDictBase
from torch import Tensor

from modules.base import OfflineRLModule
from modules.networks import (
    ACTION,
    HIDDEN_SIZES,
    Activation,
    MLPEnsemble,
    TargetNetworks,
    deterministic_action,
    deterministic_actor,
    observation,
    observations,
)


class TD3BC(OfflineRLModule):
    """TD3 whose actor maximises ``λ Q(s, π(s)) − (π(s) − a)²`` with ``λ = alpha / mean|Q|``
    (Eq. 3), on normalised states (continuous actions only).

    Twin critics regress ``r + γ min Q_target(s', π_target(s') + ε)`` with clipped noise ε; the actor
    and both targets move every ``actor_update_interval`` updates. Defaults are the paper's: α 2.5,
    lr 3e-4, τ 0.005, noise 0.2 clipped at 0.5, interval 2.

    Written by hand, and tested to give TorchRL 0.14.1's ``TD3BCLoss`` losses and gradients: that loss
    runs the twin critics through vmap over parameters swapped into one shared module at every call,
    which on a CPU at batch 256 cost a third of an update (docs/algorithms.md#speed); here both critics
    are one :class:`MLPEnsemble`, each layer one batched product.

    Steps without an actor update leave the actor's gradients unset, so the shared Adam skips the
    actor entirely (its moments do not decay either), as a separate actor optimizer would.
    """

    action_kinds = ("continuous",)

    def __init__(
        self,
        env_spec: dict,
        gamma: float = 0.99,
        alpha: float = 2.5,
        actor_lr: float = 3e-4,
        critic_lr: float = 3e-4,
        tau: float = 0.005,
        policy_noise: float = 0.2,
        noise_clip: float = 0.5,
        actor_update_interval: int = 2,
        hidden_sizes: tuple[int, ...] = HIDDEN_SIZES,
        activation: Activation = "relu",
        normalize_states: bool | None = None,
    ) -> None:
        super().__init__(env_spec, normalize_states)
        self.save_hyperparameters()
        self.policy = self.actor = deterministic_actor(self.env_spec, hidden_sizes, activation)
        self.critics = MLPEnsemble(2, self.env_spec, self.env_spec.action_dim, 1, hidden_sizes, activation)
        self.targets = TargetNetworks(actor=self.actor, critics=self.critics)
        self.target_updater = self.make_target_updater(self.targets, 0, tau)

    def parameter_groups(self) -> list[dict[str, Any]]:
        return [
            {"params": self.actor.parameters(), "lr": self.hparams.actor_lr},
            {"params": self.critics.parameters(), "lr": self.hparams.critic_lr},
        ]

    def critic_loss(
        self, batch: TensorDictBase, observed: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, Tensor]:
        """``Σ_i mean (Q_i(s, a) − y)²`` with ``y = r + γ (1 − terminated) min_i Q'_i(s', clip(π'(s') + ε))``,
        and the squared TD errors ``(critics, B)``. ε is drawn first, as TorchRL draws it. ``observed``: the batch's
        :func:`~modules.networks.observations`, where the caller has built them (the actor's loss reads the first)."""
        action, bound = batch[ACTION], self.env_spec.action_bound
        noise_clip = self.hparams.noise_clip * bound
        noise = (torch.randn_like(action) * (self.hparams.policy_noise * bound)).clamp(-noise_clip, noise_clip)
        obs, next_obs = observations(batch) if observed is None else observed
        with torch.no_grad():
            with self.targets.target("actor"):
                next_action = (deterministic_action(self.actor, self.env_spec, next_obs) + noise).clamp(-bound, bound)
            with self.targets.target("critics"):
                next_value = self.critics(next_obs, next_action).min(0).values
            target = self.bootstrapped(batch, next_value)
        td_error = (self.critics(obs, action) - target).pow(2).squeeze(-1)
        return td_error.mean(-1).sum(), td_error

    def policy_and_value(self, batch: TensorDictBase, obs: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
        """``π(s)``, ``Q₁(s, π(s))`` through detached critic parameters (the critics get no gradient
        from the actor loss) and ``λ = alpha / mean |Q₁|``. Only the first critic runs: TorchRL
        0.14.1's ``TD3BCLoss.actor_loss`` runs both and keeps the first."""
        obs = observation(batch) if obs is None else obs
        action = deterministic_action(self.actor, self.env_spec, obs)
        q_value = self.critics(obs, action, slice(0, 1), frozen=True)[0]
        return action, q_value, self.hparams.alpha / q_value.abs().mean().detach()

    def actor_loss(self, batch: TensorDictBase, obs: Tensor | None = None) -> tuple[Tensor, dict[str, Tensor]]:
        """``−λ Q₁(s, π(s)) + mean (π(s) − a)²`` (Eq. 3) and its parts."""
        action, q_value, lmbd = self.policy_and_value(batch, obs)
        loss_bc = (action - batch[ACTION]).pow(2).mean()
        return -lmbd * q_value.mean() + loss_bc, {"loss_bc": loss_bc, "lmbd": lmbd}

    def losses(self, batch: TensorDictBase) -> dict[str, Tensor]:
        observed = observations(batch)
        loss_qvalue, _ = self.critic_loss(batch, observed)
        loss_actor, actor_metrics = self.actor_loss(batch, observed[0])
        return {"loss_qvalue": loss_qvalue, "loss_actor": loss_actor, **actor_metrics}

    def training_step(self, batch: TensorDictBase, batch_idx: int) -> None:
        observed = observations(batch)  # once for both losses
        loss_qvalue, td_error = self.critic_loss(batch, observed)
        metrics = {"loss_qvalue": loss_qvalue}
        updates_actor = (self.global_step + 1) % self.hparams.actor_update_interval == 0
        loss = loss_qvalue
        if updates_actor:
            loss_actor, actor_metrics = self.actor_loss(batch, observed[0])
            loss = loss + loss_actor
            metrics.update(loss_actor=loss_actor, **actor_metrics)
        self.gradient_step(loss)
        if updates_actor:
            self.target_updater.step()
        self.log_train_metrics(metrics)
        self.log_per_source("td_error", td_error.mean(0), batch["source"])
