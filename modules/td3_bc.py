"""TD3+BC: Fujimoto & Gu (2021), "A Minimalist Approach to Offline Reinforcement Learning",
NeurIPS, arXiv:2106.06860."""

from __future__ import annotations

from typing import Any

from tensordict import TensorDictBase
from torch import Tensor
from torchrl.objectives import SoftUpdate, TD3BCLoss, ValueEstimators

from modules.base import OfflineRLModule
from modules.networks import (
    ACTION,
    HIDDEN_SIZES,
    POLICY_INPUT_KEYS,
    Activation,
    action_spec,
    deterministic_actor,
    q_critic,
)


class TD3BC(OfflineRLModule):
    """TD3 whose actor maximises ``λ Q(s, π(s)) − (π(s) − a)²`` with ``λ = alpha / mean|Q|``
    (Eq. 3), on normalised states (continuous actions only).

    TorchRL's ``TD3BCLoss``: twin critics regress ``r + γ min Q_target(s', π_target(s') + ε)`` with
    clipped noise ε; the actor and both targets move every ``actor_update_interval`` updates.
    Defaults are the paper's: α 2.5, lr 3e-4, τ 0.005, noise 0.2 clipped at 0.5, interval 2.

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
        critics = [q_critic(self.env_spec, hidden_sizes, activation) for _ in range(2)]
        self.loss = TD3BCLoss(
            self.actor,
            critics,
            action_spec=action_spec(self.env_spec),
            alpha=alpha,
            loss_function="l2",
            policy_noise=policy_noise * self.env_spec.action_bound,
            noise_clip=noise_clip * self.env_spec.action_bound,
        )
        self.loss.make_value_estimator(ValueEstimators.TD0, gamma=gamma)
        self.target_updater = SoftUpdate(self.loss, tau=tau)

    def parameter_groups(self) -> list[dict[str, Any]]:
        return [
            {"params": self.loss.actor_network_params.values(True, True), "lr": self.hparams.actor_lr},
            {"params": self.loss.qvalue_network_params.values(True, True), "lr": self.hparams.critic_lr},
        ]

    def policy_and_value(self, batch: TensorDictBase) -> tuple[Tensor, Tensor, Tensor]:
        """``π(s)``, ``Q₁(s, π(s))`` through detached critic parameters (the critics get no gradient
        from the actor loss) and ``λ = alpha / mean |Q₁|``. Only the first critic runs: TorchRL
        0.14.1's ``TD3BCLoss.actor_loss`` runs both and keeps the first."""
        action = self.actor(batch.select(*POLICY_INPUT_KEYS))[ACTION]
        critic_input = batch.select(*POLICY_INPUT_KEYS).set(ACTION, action)
        with self.loss.qvalue_network_params[0].detach().to_module(self.loss.qvalue_network):
            q_value = self.loss.qvalue_network(critic_input)["state_action_value"]
        return action, q_value, self.hparams.alpha / q_value.abs().mean().detach()

    def actor_loss(self, batch: TensorDictBase) -> tuple[Tensor, dict[str, Tensor]]:
        """``−λ Q₁(s, π(s)) + mean (π(s) − a)²`` (Eq. 3) and its parts."""
        action, q_value, lmbd = self.policy_and_value(batch)
        loss_bc = (action - batch[ACTION]).pow(2).mean()
        return -lmbd * q_value.mean() + loss_bc, {"loss_bc": loss_bc, "lmbd": lmbd}

    def losses(self, batch: TensorDictBase) -> dict[str, Tensor]:
        loss_qvalue, metadata = self.loss.qvalue_loss(batch)
        loss_actor, actor_metrics = self.actor_loss(batch)
        return {"loss_qvalue": loss_qvalue, "loss_actor": loss_actor, **actor_metrics}

    def training_step(self, batch: TensorDictBase, batch_idx: int) -> None:
        loss_qvalue, metadata = self.loss.qvalue_loss(batch)
        metrics = {"loss_qvalue": loss_qvalue}
        updates_actor = (self.global_step + 1) % self.hparams.actor_update_interval == 0
        loss = loss_qvalue
        if updates_actor:
            loss_actor, actor_metrics = self.actor_loss(batch)
            loss = loss + loss_actor
            metrics.update(loss_actor=loss_actor, **actor_metrics)
        self.gradient_step(loss)
        if updates_actor:
            self.target_updater.step()
        self.log_train_metrics(metrics)
        self.log_per_source("td_error", metadata["td_error"].mean(0), batch["source"])
