"""PRDC: Ran, Li, Zhang, Yu & Zhang (2023), "Policy Regularization with Dataset Constraint for
Offline Reinforcement Learning", ICML, arXiv:2306.06569.

Written by hand (TorchRL has no PRDC loss) on top of :class:`modules.td3_bc.TD3BC`, whose critic
update PRDC keeps unchanged.
"""

from __future__ import annotations

import torch
from tensordict import TensorDictBase
from torch import Tensor, nn

from modules.networks import HIDDEN_SIZES, Activation
from modules.td3_bc import TD3BC


class InstructionGroupedIndex(nn.Module):
    """Exact nearest neighbour among dataset keys ``(x, e)``, ``x = (β·state, action)`` and ``e =
    β·instruction_embedding``, through ``‖q − k‖² = ‖e_q − e_k‖² + ‖x_q − x_k‖²``: the embedding term
    takes one value per pair of distinct instructions (Meta-World's real data hold 120), so the
    products over every key shrink from all 479 columns to the 95 of ``x`` on Meta-World. A k-d
    tree would not help: the keys have hundreds of dimensions. Memory stays ``B × chunk_size``, which the default
    keeps within a core's L2 cache (2 MiB at B = 256): each chunk's gather, sums and minimum then run from cache.
    Searching 100,000 keys for 256 queries took 122 ms in chunks of 65,536 and 56 ms in chunks of 2,048 (Xeon, one
    thread, ``benchmarks/prdc_search.py``)."""

    def __init__(self, chunk_size: int = 2048) -> None:
        super().__init__()
        self.chunk_size = chunk_size
        for name in ("points", "point_norms", "point_instruction", "instructions"):
            self.register_buffer(name, torch.empty(0), persistent=False)  # re-indexed at every fit

    def __len__(self) -> int:
        return self.points.shape[0]

    def index(self, points: Tensor, embeddings: Tensor) -> None:
        """``points`` ``(N, X)`` and ``embeddings`` ``(N, E)``, already scaled as the queries will be."""
        device = self.points.device
        self.instructions, point_instruction = torch.unique(embeddings.to(device), dim=0, return_inverse=True)
        self.point_instruction = point_instruction
        self.points = points.to(device)
        self.point_norms = self.points.pow(2).sum(-1)

    def nearest(self, query_points: Tensor, query_embeddings: Tensor) -> Tensor:
        """Index of each query's nearest key. ``‖x_q‖²`` is left out: it is the same for every key of
        a query, so the nearest key does not depend on it."""
        embedding_distance = torch.cdist(query_embeddings, self.instructions).pow(2)  # (B, distinct instructions)
        best_distance = torch.full(query_points.shape[:1], float("inf"), device=query_points.device)
        best_index = torch.zeros(query_points.shape[:1], dtype=torch.int64, device=query_points.device)
        for start in range(0, len(self), self.chunk_size):
            stop = start + self.chunk_size
            distance = embedding_distance.index_select(1, self.point_instruction[start:stop])
            distance.add_(self.point_norms[start:stop]).addmm_(query_points, self.points[start:stop].T, alpha=-2)
            distance, index = distance.min(-1)
            closer = distance < best_distance
            best_distance = torch.where(closer, distance, best_distance)
            best_index = torch.where(closer, index + start, best_index)
        return best_index


class PRDC(TD3BC):
    """TD3+BC whose behaviour term pulls π(s) towards the action of the dataset point nearest to
    ``(β·s, π(s))`` rather than towards the action taken at s (Eq. 6): the policy may pick any
    action the data shows in a similar state, so it is not tied to one behaviour action.

    The dataset (real and imaginary transitions, normalised like the batches) is indexed in
    :meth:`setup` from the datamodule's buffers, or given with :meth:`index_dataset`. Defaults are
    the paper's and the original benchmark's: α 2.5, β 2, one neighbour, lr 3e-4. The search is
    exact (:class:`InstructionGroupedIndex`) and costs ``O(B · N · (S + A))`` per actor update for N dataset rows.
    """

    def __init__(
        self,
        env_spec: dict,
        gamma: float = 0.99,
        alpha: float = 2.5,
        beta: float = 2.0,
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
        super().__init__(
            env_spec,
            gamma=gamma,
            alpha=alpha,
            actor_lr=actor_lr,
            critic_lr=critic_lr,
            tau=tau,
            policy_noise=policy_noise,
            noise_clip=noise_clip,
            actor_update_interval=actor_update_interval,
            hidden_sizes=hidden_sizes,
            activation=activation,
            normalize_states=normalize_states,
        )
        self.save_hyperparameters()
        self.dataset_index = InstructionGroupedIndex()

    def setup(self, stage: str) -> None:
        super().setup(stage)  # normalisation statistics first: the keys use them
        datamodule = self._trainer.datamodule if self._trainer is not None else None
        if stage == "fit" and getattr(datamodule, "sampler", None) is not None:
            dataset = datamodule.sampler.every_row()
            dataset["state"] = self.normalize(dataset["state"])
            self.index_dataset(dataset)

    def index_dataset(self, transitions: TensorDictBase) -> None:
        """Keys ``(β·observation, action)`` of every transition the policy may imitate."""
        beta = self.hparams.beta
        points = torch.cat([beta * transitions["state"], transitions["action"]], -1)
        self.dataset_index.index(points, beta * transitions["instruction_embedding"])

    def actor_loss(self, batch: TensorDictBase, obs: Tensor | None = None) -> tuple[Tensor, dict[str, Tensor]]:
        if len(self.dataset_index) == 0:
            raise RuntimeError("PRDC: no dataset indexed; fit with an OfflineDataModule or call index_dataset()")
        action, q_value, lmbd = self.policy_and_value(batch, obs)
        with torch.no_grad():
            beta, index = self.hparams.beta, self.dataset_index
            query = torch.cat([beta * batch["state"], action], -1)
            nearest = index.nearest(query, beta * batch["instruction_embedding"])
            neighbour_action = index.points[nearest, -self.env_spec.action_dim :]
        loss_dataset_constraint = (action - neighbour_action).pow(2).mean()
        return -lmbd * q_value.mean() + loss_dataset_constraint, {
            "loss_dataset_constraint": loss_dataset_constraint,
            "lmbd": lmbd,
        }
