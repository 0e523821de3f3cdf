"""Discrete Conservative Q-Learning: Kumar, Zhou, Tucker & Levine (2020), "Conservative Q-Learning for
Offline Reinforcement Learning", NeurIPS, arXiv:2006.04779. Continuous
actions (SAC-based CQL): :class:`modules.cql.CQL`."""

from __future__ import annotations

from typing import Any

import torch
from tensordict import TensorDictBase
from tensordict.nn import TensorDictSequential
from torch import Tensor

from modules.base import OfflineRLModule
from modules.networks import (
    ACTION,
    HIDDEN_SIZES,
    Activation,
    TargetNetworks,
    actor_network,
    discrete_head,
    greedy,
    observation,
)


class DiscreteCQL(OfflineRLModule):
    """CQL(H) on one Q-network whose greedy action is the policy: Q-learning plus
    ``conservative_weight · (log Σ_a exp Q(s, a) − Q(s, a_data))`` (Eq. 4), so actions the data never shows
    cannot look better than its own; d3rlpy's DiscreteCQL (α = 10) in the original benchmark.

    Written by hand on the Q-network's tensors, and tested to give TorchRL 0.14.1's ``DiscreteCQLLoss``
    losses and gradients (with its TD target read from the target network, which that loss's own TD(0)
    estimator ignores). Without that loss's TensorDict modules and parameter swaps an update at batch 256
    runs about a sixth faster on a CPU (docs/algorithms.md#speed).

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
        self.q_values = discrete_head(self.env_spec, ACTION, hidden_sizes, activation)  # Q(s, ·) at "action"
        self.policy = TensorDictSequential(self.q_values, greedy())
        self.targets = TargetNetworks(q_network=actor_network(self.q_values))
        self.target_updater = self.make_target_updater(self.targets, target_update_interval, tau)

    @property
    def q_network(self) -> torch.nn.Module:
        return actor_network(self.q_values)

    def parameter_groups(self) -> list[dict[str, Any]]:
        return [{"params": self.q_values.parameters(), "lr": self.hparams.critic_lr}]

    def td_target(self, batch: TensorDictBase) -> Tensor:
        """``r + γ (1 − terminated) max_a Q_target(s', a)``, ``(B,)``."""
        with torch.no_grad(), self.targets.target("q_network"):
            next_value = self.q_network(observation(batch, ("next",))).max(-1, keepdim=True).values
            return self.bootstrapped(batch, next_value).squeeze(-1)

    def losses(self, batch: TensorDictBase) -> dict[str, Tensor]:
        """Per row: ``loss_qvalue`` (half the squared TD error), ``loss_cql`` (Eq. 4's gap) and ``td_error``."""
        q_values = self.q_network(observation(batch))
        q_taken = q_values.gather(-1, batch[ACTION].unsqueeze(-1)).squeeze(-1)
        td_error = (q_taken - self.td_target(batch)).pow(2)
        return {
            "loss_qvalue": 0.5 * td_error,
            "loss_cql": torch.logsumexp(q_values, -1) - q_taken,
            "td_error": td_error.detach(),
        }

    def training_step(self, batch: TensorDictBase, batch_idx: int) -> None:
        per_row = self.losses(batch)
        losses = {name: value.mean() for name, value in per_row.items()}
        # Eq. 4: the Bellman error plus the weighted conservative gap.
        self.gradient_step(losses["loss_qvalue"] + self.hparams.conservative_weight * losses["loss_cql"])
        self.target_updater.step()
        self.log_train_metrics(losses)
        self.log_per_source("td_error", per_row["td_error"], batch["source"])
