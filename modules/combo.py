"""COMBO: Yu, Kumar, Rafailov, Rajeswaran, Levine & Finn (2021), "COMBO: Conservative Offline
Model-Based Policy Optimization", NeurIPS, arXiv:2102.08363.

Written by hand: TorchRL has no COMBO loss (nor a model-based offline one to build it from).
"""

from __future__ import annotations

import math
from typing import Any

import torch
from tensordict import TensorDict, TensorDictBase
from torch import Tensor

from modules.networks import HIDDEN_SIZES, POLICY_INPUT_KEYS, Activation, MLPEnsemble, observation
from modules.soft_actor_critic import SoftActorCritic


class COMBO(SoftActorCritic):
    """SAC on a mix of real transitions and one-step rollouts of a learned dynamics ensemble, with
    a conservative critic: Eq. 2 pushes Q down at states from that mix (a share ``real_data_ratio``
    of real rows) with actions from a uniform and the current policy (CQL(H)'s log-sum-exp
    over ``num_action_samples`` of each), and up at the dataset's own state-action pairs.

    The ensemble of ``num_dynamics_models`` Gaussians predicts ``(s' − s, r)`` from
    ``(state ⊕ instruction, action)`` by negative log-likelihood on real batches, trained jointly
    with the agent (one optimizer step per batch, see :class:`OfflineRLModule`). Each update keeps
    ``real_data_ratio`` of the batch's rows and rolls the states of the others one step (``rollout_horizon`` 1,
    the original benchmark's setting) through a randomly chosen member, under the current policy, so the critics
    see as many rows as the batch has (:meth:`compose`); model transitions never terminate.

    Defaults follow the original benchmark's COMBO config: 7 models, horizon 1, actor lr 1e-4,
    critic lr 3e-4, and the paper's SAC settings (γ 0.99, τ 0.005, target entropy −|A|).
    Simplifications, on purpose: the rollouts start from the current batch instead of a separate
    model buffer refilled every epoch, and all members are used instead of the 5 best on held-out data.
    """

    def __init__(
        self,
        env_spec: dict,
        gamma: float = 0.99,
        conservative_weight: float = 1.0,
        real_data_ratio: float = 0.5,
        num_action_samples: int = 10,
        num_dynamics_models: int = 7,
        rollout_horizon: int = 1,
        actor_lr: float = 1e-4,
        critic_lr: float = 3e-4,
        dynamics_lr: float = 1e-3,
        temperature_lr: float = 1e-4,
        tau: float = 0.005,
        hidden_sizes: tuple[int, ...] = HIDDEN_SIZES,
        activation: Activation = "relu",
        normalize_states: bool | None = None,
    ) -> None:
        super().__init__(env_spec, normalize_states, hidden_sizes, activation, tau)
        self.save_hyperparameters()
        spec = self.env_spec
        if not 0.0 < real_data_ratio <= 1.0:
            raise ValueError(f"COMBO: real_data_ratio must lie in (0, 1], got {real_data_ratio}")
        self.dynamics = MLPEnsemble(
            num_dynamics_models, spec, spec.action_dim, 2 * (spec.state_dim + 1), hidden_sizes, activation
        )

    def parameter_groups(self) -> list[dict[str, Any]]:
        return [*super().parameter_groups(), {"params": self.dynamics.parameters(), "lr": self.hparams.dynamics_lr}]

    def sample_actions(self, batch: TensorDictBase) -> tuple[Tensor, Tensor]:
        """One reparameterised action per row of ``batch`` and its log-probability."""
        return self.sample(self.action_distribution(observation(batch)))

    def predict(self, obs: Tensor, action: Tensor, member_of_row: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """Mean and log standard deviation of ``(s' − s, r)`` from every member, ``(M, B, S + 1)`` each,
        or with ``member_of_row`` from that member only, ``(B, S + 1)``."""
        if member_of_row is None:
            output = self.dynamics(obs, action)
        else:
            output = self.dynamics.one_member_per_row(obs, action, member_of_row)
        mean, log_std = output.chunk(2, -1)
        return mean, log_std.clamp(-10, 2)

    def dynamics_loss(self, batch: TensorDictBase) -> Tensor:
        """Gaussian negative log-likelihood of the real transition, averaged over members (per row)."""
        mean, log_std = self.predict(observation(batch), batch["action"])
        target = torch.cat([batch["next", "state"] - batch["state"], batch["next", "reward"]], -1)
        nll = 0.5 * ((target - mean) / log_std.exp()).pow(2) + log_std + 0.5 * math.log(2 * math.pi)
        return nll.sum(-1).mean(0)

    @torch.no_grad()
    def model_rollout(self, batch: TensorDictBase) -> TensorDict:
        """``rollout_horizon`` imagined steps from every state of ``batch``; returns the last step."""
        step = batch.select(*POLICY_INPUT_KEYS).clone()
        members = torch.randint(self.hparams.num_dynamics_models, step.shape, device=batch.device)
        rows = torch.arange(step.shape[0], device=batch.device)
        outputs = self.hparams.num_dynamics_models, step.shape[0], self.env_spec.state_dim + 1
        for _ in range(self.hparams.rollout_horizon):
            action, _ = self.sample_actions(step)
            mean, log_std = self.predict(observation(step), action, members)
            # every member's draw, as before
            noise = torch.randn(outputs, device=batch.device, dtype=mean.dtype)[members, rows]
            sample = mean + log_std.exp() * noise
            next_step = TensorDict(
                {"state": step["state"] + sample[:, :-1], "instruction_embedding": step["instruction_embedding"]},
                step.shape,
            )
            transition = step.set("action", action).set("next", next_step.set("reward", sample[:, -1:]))
            step = next_step.exclude("reward")
        terminated = torch.zeros(*step.shape, 1, dtype=torch.bool, device=batch.device)
        return transition.set(("next", "terminated"), terminated)

    def compose(self, batch: TensorDictBase) -> tuple[TensorDict, Tensor]:
        """The critics' batch, as the original code composes it (OfflineRL's COMBO: ``int(batch_size ·
        real_data_ratio)`` real rows, the rest model rows): ``round(real_data_ratio · B)`` rows of ``batch``
        (at least one), chosen at random so that real and imaginary rows stay in proportion, then one-step model
        rollouts from the states of the other rows. Also returns which rows of ``batch`` stay real."""
        keys = [*POLICY_INPUT_KEYS, "action", *(("next", key) for key in (*POLICY_INPUT_KEYS, "reward", "terminated"))]
        rows = batch.shape[0]
        num_real = max(1, round(self.hparams.real_data_ratio * rows))
        order = torch.randperm(rows, device=batch.device)
        real_rows = order[:num_real]
        selected = batch.select(*keys)  # gather only the keys the losses read
        real = selected[real_rows]
        if num_real == rows:
            return real, real_rows
        return torch.cat([real, self.model_rollout(selected[order[num_real:]])]), real_rows

    def losses(self, batch: TensorDictBase) -> dict[str, Tensor]:
        return self.losses_and_real_rows(batch)[0]

    def losses_and_real_rows(self, batch: TensorDictBase) -> tuple[dict[str, Tensor], Tensor]:
        """Per row of the composed batch (:meth:`compose`; ``loss_dynamics`` per row of ``batch``), each to be
        averaged: Eq. 2's push-up at the data's own (s, a) is spread over the rows so that its mean is the real
        rows' mean. Also returns which rows of ``batch`` stayed real, in the order of the composed batch."""
        mixed, real_rows = self.compose(batch)
        rows, num_real = mixed.shape[0], real_rows.shape[0]
        obs = observation(mixed)
        # Bellman backup on real and model rows: soft double-Q target from the target critics.
        with torch.no_grad():
            next_obs = observation(mixed, ("next",))
            next_value = self.target_value(next_obs, self.action_distribution(next_obs), True)
            target = self.bootstrapped(mixed, next_value.unsqueeze(-1)).squeeze(-1)

        # Eq. 2's regulariser: log-sum-exp of Q over uniform and policy actions at the mixed states,
        # importance-weighted by their densities, minus Q at the dataset's own (s, a). The policy's
        # proposals come from the distribution the actor loss samples from.
        samples = self.hparams.num_action_samples
        distribution = self.action_distribution(obs)
        with torch.no_grad():
            proposals = [self.sample(distribution, samples)]  # (n, B, A), (n, B)
        # Q at the rows' own actions, (critics, B) with the real rows first, and the soft maximum over n uniform
        # actions and the n proposals, from one critic pass
        q_data, soft_maximum = self.data_and_proposal_values(obs, mixed["action"], proposals)
        push_down = (soft_maximum - math.log(2 * samples)).sum(0)  # (B,)
        push_up = torch.cat([q_data[:, :num_real].sum(0) * (rows / num_real), q_data.new_zeros(rows - num_real)])

        # SAC's actor and temperature updates on the mixed states; the critics get no gradient here.
        loss_actor, loss_alpha = self.actor_and_temperature_losses(obs, *self.sample(distribution))
        per_row = {
            "loss_qvalue": (q_data - target).pow(2).sum(0),
            "loss_conservative": push_down - push_up,
            "loss_actor": loss_actor,
            "loss_alpha": loss_alpha,
            "loss_dynamics": self.dynamics_loss(batch),
        }
        return per_row, real_rows

    def training_step(self, batch: TensorDictBase, batch_idx: int) -> None:
        per_row, real_rows = self.losses_and_real_rows(batch)
        losses = {name: value.mean() for name, value in per_row.items()}
        # One optimiser step over every network (each term reaches only its own parameters):
        # critics by Eq. 2 (Bellman error + β · conservative regulariser), SAC's actor and temperature,
        # and the dynamics ensemble's maximum likelihood (as in MBPO).
        total = (
            losses["loss_qvalue"]
            + self.hparams.conservative_weight * losses["loss_conservative"]
            + losses["loss_actor"]
            + losses["loss_alpha"]
            + losses["loss_dynamics"]
        )
        self.gradient_step(total)
        self.target_updater.step()
        self.log_train_metrics({**losses, "alpha": self.log_alpha.exp()})
        self.log_per_source("loss_qvalue", per_row["loss_qvalue"][: real_rows.shape[0]], batch["source"][real_rows])
