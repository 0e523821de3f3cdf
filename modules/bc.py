"""Behaviour cloning: regress the dataset's actions (the baseline of ImagineBench's tables)."""

from __future__ import annotations

import warnings
from functools import partial
from typing import Any

import torch.nn.functional as F
from tensordict import TensorDictBase
from tensordict.nn import TensorDictSequential
from torch import Tensor
from torchrl.objectives import BCLoss

from modules.base import OfflineRLModule
from modules.networks import HIDDEN_SIZES, Activation, deterministic_actor, discrete_head, greedy


def penalized_cross_entropy(logits: Tensor, action: Tensor, logit_penalty: float) -> Tensor:
    """Per-row cross-entropy plus ``logit_penalty · mean(logits²)`` on the raw logits, as in Fujimoto
    et al.'s discrete BCQ code. d3rlpy 2.8.1 squares ``Categorical.logits``, which torch normalises
    to log-probabilities, so its penalty pulls the distribution towards uniform instead."""
    return F.cross_entropy(logits, action, reduction="none") + logit_penalty * logits.pow(2).mean(-1)


class BC(OfflineRLModule):
    """Behaviour cloning with d3rlpy's defaults, which the original benchmark used.

    Discrete actions: cross-entropy on the logits plus ``logit_penalty · mean(logits²)`` (the role of
    d3rlpy DiscreteBC's ``beta``: logits stop growing once the data is fitted; see
    :func:`penalized_cross_entropy` for how d3rlpy's form differs). Continuous
    actions: a deterministic tanh actor fitted by mean squared error (d3rlpy BC's default policy).
    """

    def __init__(
        self,
        env_spec: dict,
        lr: float = 1e-3,
        logit_penalty: float = 0.5,
        hidden_sizes: tuple[int, ...] = HIDDEN_SIZES,
        activation: Activation = "relu",
        normalize_states: bool | None = None,
    ) -> None:
        super().__init__(env_spec, normalize_states)
        self.save_hyperparameters()
        if self.env_spec.is_discrete:
            # BCLoss reads its prediction at the action key, so the actor writes logits there.
            self.actor = discrete_head(self.env_spec, "action", hidden_sizes, activation)
            self.policy = TensorDictSequential(self.actor, greedy())
            loss_function = partial(penalized_cross_entropy, logit_penalty=logit_penalty)
        else:
            self.actor = deterministic_actor(self.env_spec, hidden_sizes, activation)
            self.policy = self.actor
            loss_function = "mse"
        with warnings.catch_warnings():  # TorchRL 0.14.1's BCLoss misses an annotation for its unused target params
            warnings.filterwarnings("ignore", message="The name target_actor_network_params")
            self.loss = BCLoss(self.actor, loss_function=loss_function, reduction="none")

    def parameter_groups(self) -> list[dict[str, Any]]:
        return [{"params": self.actor.parameters(), "lr": self.hparams.lr}]

    def losses(self, batch: TensorDictBase) -> dict[str, Tensor]:
        return {"loss_bc": self.loss(batch)["loss_bc"]}  # per row, so it can be split by source

    def training_step(self, batch: TensorDictBase, batch_idx: int) -> None:
        per_row = self.losses(batch)["loss_bc"]
        loss = per_row.mean()
        self.gradient_step(loss)
        self.log_train_metrics({"loss_bc": loss})
        self.log_per_source("loss_bc", per_row, batch["source"])
