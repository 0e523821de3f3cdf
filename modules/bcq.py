"""Batch-Constrained deep Q-learning for continuous actions, written by hand (TorchRL has no BCQ loss):
Fujimoto, Meger & Precup (2019), "Off-Policy Deep Reinforcement Learning without Exploration", ICML,
arXiv:1812.02900. Discrete actions, from a later paper: :class:`modules.discrete_bcq.DiscreteBCQ`.
"""

from __future__ import annotations

from typing import Any

import torch
from tensordict import TensorDictBase
from tensordict.nn import TensorDictModule, TensorDictSequential
from torch import Tensor, nn

from imaginebench.env_spec import EnvSpec
from modules.base import OfflineRLModule
from modules.networks import (
    ACTION,
    HIDDEN_SIZES,
    OBSERVATION,
    Activation,
    MLPEnsemble,
    TargetNetworks,
    observation_and_input_mlp,
    observations,
    policy_input,
)


class ActionVAE(nn.Module):
    """G(a|s): a conditional VAE of the data's actions (continuous BCQ's generative model, §4)."""

    def __init__(self, spec: EnvSpec, latent_dim: int, hidden_sizes: tuple[int, ...], activation: Activation) -> None:
        super().__init__()
        self.bound, self.latent_dim = spec.action_bound, latent_dim
        self.encoder = observation_and_input_mlp(spec, spec.action_dim, 2 * latent_dim, hidden_sizes, activation)
        self.decoder = observation_and_input_mlp(spec, latent_dim, spec.action_dim, hidden_sizes, activation)

    def forward(self, obs: Tensor, action: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """Reconstruction, latent mean and log standard deviation."""
        mean, log_std = self.encoder(obs, action).chunk(2, -1)
        log_std = log_std.clamp(-4, 15)
        latent = mean + log_std.exp() * torch.randn_like(mean)
        return self.decode(obs, latent), mean, log_std

    def decode(self, obs: Tensor, latent: Tensor | None = None, samples: tuple[int, ...] = ()) -> Tensor:
        """Without ``latent``, ``samples`` draws per state (leading dims) from the prior clipped to
        [-0.5, 0.5], so that decoded actions stay near the data."""
        if latent is None:
            latent = torch.randn(*samples, *obs.shape[:-1], self.latent_dim, device=obs.device).clamp(-0.5, 0.5)
        return self.bound * torch.tanh(self.decoder(obs, latent))


class Perturbation(nn.Module):
    """ξ_φ(s, a, Φ): moves a generated action by at most ``flexibility · bound`` per dimension."""

    def __init__(
        self, spec: EnvSpec, flexibility: float, hidden_sizes: tuple[int, ...], activation: Activation
    ) -> None:
        super().__init__()
        self.bound, self.flexibility = spec.action_bound, flexibility
        self.net = observation_and_input_mlp(spec, spec.action_dim, spec.action_dim, hidden_sizes, activation)

    def forward(self, obs: Tensor, action: Tensor) -> Tensor:
        shift = self.flexibility * self.bound * torch.tanh(self.net(obs, action))
        return (action + shift).clamp(-self.bound, self.bound)


class BCQPolicy(nn.Module):
    """Alg. 1's action selection: ``num_candidates`` generated and perturbed actions, the best by Q₁."""

    def __init__(self, vae: ActionVAE, perturbation: Perturbation, critics: MLPEnsemble, num_candidates: int) -> None:
        super().__init__()
        self.vae, self.perturbation, self.critics, self.num_candidates = vae, perturbation, critics, num_candidates

    def candidates(self, obs: Tensor) -> Tensor:
        """``(num_candidates, B, A)`` generated and perturbed actions for ``(B, D)`` observations."""
        return self.perturbation(obs, self.vae.decode(obs, samples=(self.num_candidates,)))

    def forward(self, obs: Tensor) -> Tensor:
        candidates = self.candidates(obs)
        best = self.critics(obs, candidates)[0].argmax(0)  # (B, 1) index into the candidates
        return candidates.gather(0, best.expand(1, *candidates.shape[1:])).squeeze(0)


class BCQ(OfflineRLModule):
    """Q-learning restricted to actions a generative model of the data supports: a VAE G(a|s) generates
    actions, a perturbation network shifts them by at most ``action_flexibility`` (Φ) to raise Q, twin
    critics learn from the soft-clipped double-Q target ``λ min Q + (1 − λ) max Q`` maximised over
    ``num_candidates`` generated actions at s' (Eq. 13), and the VAE fits ``reconstruction + kl_weight · KL``
    (Eq. 14–15).

    Defaults follow d3rlpy's BCQ, which the original benchmark used: Φ 0.05, λ 0.75, 100 candidates, KL
    weight 0.5, lr 1e-3, τ 0.005. ``target_update_interval`` > 0 copies the targets every that many
    updates; 0 (the default) moves them by ``tau`` after each.
    """

    action_kinds = ("continuous",)
    other_action_kind = "modules.discrete_bcq.DiscreteBCQ"

    def __init__(
        self,
        env_spec: dict,
        gamma: float = 0.99,
        lr: float = 1e-3,
        action_flexibility: float = 0.05,
        double_q_weight: float = 0.75,
        num_candidates: int = 100,
        kl_weight: float = 0.5,
        target_update_interval: int = 0,
        tau: float = 0.005,
        hidden_sizes: tuple[int, ...] = HIDDEN_SIZES,
        activation: Activation = "relu",
        normalize_states: bool | None = None,
    ) -> None:
        super().__init__(env_spec, normalize_states)
        self.save_hyperparameters()
        spec = self.env_spec
        self.vae = ActionVAE(spec, 2 * spec.action_dim, hidden_sizes, activation)
        self.perturbation = Perturbation(spec, action_flexibility, hidden_sizes, activation)
        self.critics = MLPEnsemble(2, spec, spec.action_dim, 1, hidden_sizes, activation)
        self.selector = BCQPolicy(self.vae, self.perturbation, self.critics, num_candidates)
        self.targets = TargetNetworks(perturbation=self.perturbation, critics=self.critics)
        self.policy = TensorDictSequential(
            policy_input(), TensorDictModule(self.selector, in_keys=[OBSERVATION], out_keys=[ACTION])
        )
        self.target_updater = self.make_target_updater(self.targets, target_update_interval, tau)

    def parameter_groups(self) -> list[dict[str, Any]]:
        networks = [self.vae, self.perturbation, self.critics]
        return [{"params": [p for network in networks for p in network.parameters()], "lr": self.hparams.lr}]

    def losses(self, batch: TensorDictBase) -> dict[str, Tensor]:
        (obs, next_obs), action = observations(batch), batch["action"]
        reconstruction, mean, log_std = self.vae(obs, action)
        kl = 0.5 * (mean.pow(2) + (2 * log_std).exp() - 2 * log_std - 1).sum(-1)
        loss_vae = (reconstruction - action).pow(2).mean(-1) + self.hparams.kl_weight * kl
        with torch.no_grad(), self.targets.target("perturbation"), self.targets.target("critics"):
            q_next = self.critics(next_obs, self.selector.candidates(next_obs))  # the targets' (2, n, B, 1)
            weight = self.hparams.double_q_weight
            soft_clipped = weight * q_next.min(0).values + (1 - weight) * q_next.max(0).values
            next_value = soft_clipped.max(0).values
            target = self.bootstrapped(batch, next_value)
        q_data = self.critics(obs, action)
        loss_qvalue = (q_data - target).pow(2).sum(0).squeeze(-1)
        generated = self.perturbation(obs, self.vae.decode(obs).detach())
        loss_actor = -self.critics(obs, generated, slice(0, 1), frozen=True)[0].squeeze(-1)  # the critics stay put
        return {"loss_qvalue": loss_qvalue, "loss_actor": loss_actor, "loss_vae": loss_vae}

    def training_step(self, batch: TensorDictBase, batch_idx: int) -> None:
        per_row = self.losses(batch)
        losses = {name: value.mean() for name, value in per_row.items()}
        # Twin critics (Eq. 13) + the perturbation maximising Q_1 (DDPG-style) + the VAE (Eq. 14–15);
        # one optimiser step over every network (each term reaches only its own parameters).
        self.gradient_step(losses["loss_qvalue"] + losses["loss_actor"] + losses["loss_vae"])
        self.target_updater.step()
        self.log_train_metrics(losses)
        self.log_per_source("loss_qvalue", per_row["loss_qvalue"], batch["source"])
