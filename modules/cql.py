"""Conservative Q-Learning for continuous actions: Kumar, Zhou, Tucker & Levine (2020), "Conservative
Q-Learning for Offline Reinforcement Learning", NeurIPS, arXiv:2006.04779. Discrete actions:
:class:`modules.discrete_cql.DiscreteCQL`."""

from __future__ import annotations

import torch
from tensordict import TensorDictBase
from torch import Tensor

from modules.networks import ACTION, HIDDEN_SIZES, Activation, observations
from modules.soft_actor_critic import SoftActorCritic


class CQL(SoftActorCritic):
    """CQL(H) for continuous actions: SAC (a TanhNormal actor, two critics, a learned entropy temperature)
    plus ``conservative_weight · (log Σ_a exp Q(s, a) − Q(s, a_data))`` (Kumar et al. 2020, Eq. 4), the
    log-sum-exp estimated from ``num_action_samples`` uniform and policy actions per state, with d3rlpy CQL's
    defaults (weight 5, actor lr 1e-4, critic lr 3e-4, τ 0.005).

    The conservative estimator is the paper's, per state: ``N`` uniform actions and ``N`` policy actions drawn
    at s and ``N`` at s', all scored at s as Kumar et al.'s code does, in one log-sum-exp of ``Q − log density``
    over the 3·N (Eq. 4 with the importance-sampled estimator of Appendix F). TorchRL 0.14.1's ``cql_loss``
    broadcasts Q(s, a_data) of shape ``(B, 1)`` against log-sum-exps of shape ``(B·N,)``, takes each over the
    three proposals of one sample rather than over all 3·N, and scores actions drawn at s' at s'.

    Written on the networks' tensors (see :mod:`modules.soft_actor_critic`), and tested to give the losses and
    gradients of TorchRL 0.14.1's ``CQLLoss`` with that estimator; it skips ``CQLLoss``'s behaviour-cloning
    actor loss, which training never used, draws the policy's proposals from the actor passes the SAC losses
    make anyway, and scores the data actions with the proposals in one critic pass.

    Departures from the original benchmark, on purpose: TD targets are discounted by ``gamma`` (its d3rlpy
    path trained undiscounted targets) and, as TorchRL's default, carry no entropy bonus; the conservative
    weight is fixed (d3rlpy also scales it by a learned Lagrange multiplier that starts at 1).
    ``target_update_interval`` > 0 copies the critics' targets every that many updates; 0 (the default)
    moves them by ``tau`` after every update.
    """

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
        super().__init__(env_spec, normalize_states, hidden_sizes, activation, tau, target_update_interval)
        self.save_hyperparameters()

    def losses(self, batch: TensorDictBase) -> dict[str, Tensor]:
        """Per row: ``loss_qvalue`` (squared TD errors summed over the critics), ``loss_cql`` (the penalty
        summed over the critics), ``loss_actor`` and ``loss_alpha``; and for logging ``td_error``, the larger
        critic's squared TD error, and ``entropy``, ``−log π(a|s)`` of the actor's action (``CQLLoss`` logged
        both). Random draws in TorchRL's order: a' at s', the proposals at s and at s', the uniform ones, the
        actor's action at s."""
        (obs, next_obs), data_action = observations(batch), batch[ACTION]
        with torch.no_grad():
            next_distribution = self.action_distribution(next_obs)
        target = self.bootstrapped(batch, self.target_value(next_obs, next_distribution, False).unsqueeze(-1))
        distribution = self.action_distribution(obs)
        samples = self.hparams.num_action_samples
        with torch.no_grad():
            proposals = [self.sample(distribution, samples), self.sample(next_distribution, samples)]
        # N uniform actions and the 2·N proposals, all scored at s
        q_data, soft_maximum = self.data_and_proposal_values(obs, data_action, proposals)
        penalty = soft_maximum - q_data  # (critics, B)
        td_error = (q_data - target.squeeze(-1)).pow(2)
        action, log_prob = self.sample(distribution)
        loss_actor, loss_alpha = self.actor_and_temperature_losses(obs, action, log_prob)
        return {
            "loss_qvalue": td_error.sum(0),
            "loss_cql": penalty.sum(0),
            "loss_actor": loss_actor,
            "loss_alpha": loss_alpha,
            "td_error": td_error.detach().max(0).values,
            "entropy": -log_prob.detach(),
        }

    def training_step(self, batch: TensorDictBase, batch_idx: int) -> None:
        per_row = self.losses(batch)
        losses = {name: value.mean() for name, value in per_row.items() if name != "td_error"}  # entropy as well
        # Eq. 4 (the Bellman error plus the weighted conservative gap) + Alg. 1 line 4: SAC's policy and
        # temperature updates.
        loss = losses["loss_qvalue"] + self.hparams.conservative_weight * losses["loss_cql"]
        self.gradient_step(loss + losses["loss_actor"] + losses["loss_alpha"])
        self.target_updater.step()
        self.log_train_metrics({**losses, "alpha": self.log_alpha.exp()})
        self.log_per_source("td_error", per_row["td_error"], batch["source"])
