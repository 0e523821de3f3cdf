"""Discrete Conservative Q-Learning: Kumar, Zhou, Tucker & Levine (2020), "Conservative Q-Learning for
Offline Reinforcement Learning", NeurIPS, arXiv:2006.04779, on TorchRL's ``DiscreteCQLLoss``. Continuous
actions (SAC-based CQL): :class:`modules.cql.CQL`."""

from __future__ import annotations

from typing import Any

from tensordict import TensorDictBase
from torchrl.objectives import DiscreteCQLLoss

from imaginebench.upstream.torchrl_td0 import TargetNetworkTD0
from modules.base import OfflineRLModule
from modules.networks import HIDDEN_SIZES, Activation, q_value_actor


class DiscreteCQL(OfflineRLModule):
    """CQL(H) on one Q-network whose greedy action is the policy: Q-learning plus
    ``conservative_weight · (log Σ_a exp Q(s, a) − Q(s, a_data))`` (Eq. 4), so actions the data never shows
    cannot look better than its own; d3rlpy's DiscreteCQL (α = 10) in the original benchmark.

    Departures from the original benchmark, on purpose: TD targets are discounted by ``gamma`` (its d3rlpy
    path trained undiscounted targets); the Q-network learns at ``critic_lr`` = 3e-4 rather than d3rlpy's
    6.25e-5 (tuned for Atari at batch 32), so that a small BabyAI problem trains in a few thousand updates,
    and its target network is copied every ``target_update_interval`` = 500 updates rather than 8000
    (CleanRL's DQN uses 500 on small tasks). ``target_update_interval`` 0 moves the target by ``tau``
    towards the online network after every update instead.
    """

    action_kinds = ("discrete",)
    other_action_kind = "modules.cql.CQL"

    def __init__(
        self,
        env_spec: dict,
        gamma: float = 0.99,
        conservative_weight: float = 10.0,
        critic_lr: float = 3e-4,
        target_update_interval: int = 500,
        tau: float = 0.005,
        hidden_sizes: tuple[int, ...] = HIDDEN_SIZES,
        activation: Activation = "relu",
        normalize_states: bool | None = None,
    ) -> None:
        super().__init__(env_spec, normalize_states)
        self.save_hyperparameters()
        self.policy = q_value_actor(self.env_spec, hidden_sizes, activation)
        self.loss = DiscreteCQLLoss(self.policy, action_space="categorical")
        estimator = TargetNetworkTD0(gamma=gamma, value_network=self.policy)
        estimator.set_keys(value=self.loss.tensor_keys.value)
        self.loss.make_value_estimator(estimator)
        self.target_updater = self.make_target_updater(self.loss, target_update_interval, tau)

    def parameter_groups(self) -> list[dict[str, Any]]:
        return [{"params": self.loss.value_network_params.values(True, True), "lr": self.hparams.critic_lr}]

    def losses(self, batch: TensorDictBase) -> TensorDictBase:
        return self.loss(batch)  # also writes the per-row TD error into the batch as "td_error"

    def training_step(self, batch: TensorDictBase, batch_idx: int) -> None:
        losses = self.losses(batch)
        # Eq. 4: the Bellman error plus the weighted conservative gap.
        self.gradient_step(losses["loss_qvalue"] + self.hparams.conservative_weight * losses["loss_cql"])
        self.target_updater.step()
        self.log_train_metrics(losses)
        self.log_per_source("td_error", batch["td_error"], batch["source"])
