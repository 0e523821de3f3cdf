"""A tiny instruction-following bandit in the batch layout the datamodule produces.

Each transition is one step of one of four tasks: the instruction embedding says which, and the
right action depends on both the instruction and the state, so a policy that ignores either
cannot fit it.
"""

from __future__ import annotations

from collections.abc import Callable

import lightning.pytorch as pl
import torch
from tensordict import TensorDict
from torch.utils.data import DataLoader

from datamodules.offline_data import EpochBatches, as_is
from imaginebench.env_spec import EnvSpec

DISCRETE = {"state_dim": 3, "embedding_dim": 8, "action_kind": "discrete", "num_actions": 4}
CONTINUOUS = {"state_dim": 3, "embedding_dim": 8, "action_kind": "continuous", "action_dim": 2}
NUM_TASKS = 4
SMALL = {"hidden_sizes": (64, 64)}
"""Enough for these problems, and fast on a CPU (continuous CQL evaluates its critics on 6·N·B rows)."""


class InstructionBandit:
    """Discrete: task k wants action ``(k + [s₀ > 0]) mod n``. Continuous: ``±0.8·tanh(W s)``, sign by task parity."""

    def __init__(self, env_spec: dict, seed: int = 0) -> None:
        self.spec = EnvSpec(**env_spec)
        self.generator = torch.Generator().manual_seed(seed)
        self.embeddings = torch.randn(NUM_TASKS, self.spec.embedding_dim, generator=self.generator)
        self.weights = torch.randn(self.spec.state_dim, max(self.spec.action_dim, 1), generator=self.generator)

    def expert_action(self, state: torch.Tensor, task: torch.Tensor) -> torch.Tensor:
        if self.spec.is_discrete:
            return (task + (state[:, 0] > 0).long()) % self.spec.num_actions
        sign = 1.0 - 2.0 * (task % 2).float().unsqueeze(-1)
        return sign * 0.8 * torch.tanh(state @ self.weights)

    def observations(self, batch_size: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(state, instruction_embedding, task)``."""
        state = torch.randn(batch_size, self.spec.state_dim, generator=self.generator)
        task = torch.randint(NUM_TASKS, (batch_size,), generator=self.generator)
        return state, self.embeddings[task], task

    def batch(self, batch_size: int = 64) -> TensorDict:
        """Expert transitions that end the episode with reward 1; rows alternate real / imaginary."""
        state, embedding, task = self.observations(batch_size)
        flags = torch.ones(batch_size, 1, dtype=torch.bool)
        next_state, _, _ = self.observations(batch_size)
        return TensorDict(
            {
                "state": state,
                "instruction_embedding": embedding,
                "action": self.expert_action(state, task),
                "task_id": task,
                "source": torch.arange(batch_size) % 2,
                "next": {
                    "state": next_state,
                    "instruction_embedding": embedding.clone(),
                    "reward": torch.ones(batch_size, 1),
                    "terminated": flags.clone(),
                    "truncated": ~flags,
                    "done": flags.clone(),
                },
            },
            batch_size=[batch_size],
        )

    def success_rate(self, module: pl.LightningModule, samples: int = 2000) -> float:
        """Discrete: share of greedy actions that are right. Continuous: ``1 − MSE / E[a*²]``."""
        state, embedding, task = self.observations(samples)
        target = self.expert_action(state, task)
        with torch.no_grad():
            action = module.eval().act(state, embedding)
        if self.spec.is_discrete:
            return float((action == target).float().mean())
        return float(1 - (action - target).pow(2).mean() / target.pow(2).mean())


def whole_batches(make_batch: Callable[[], TensorDict], num_batches: int) -> DataLoader:
    """Fresh whole batches, served as the datamodule serves its replay-buffer stream."""
    return DataLoader(EpochBatches(lambda: iter(make_batch, None), num_batches), batch_size=None, collate_fn=as_is)


def fit(
    module: pl.LightningModule, make_batch: Callable[[], TensorDict], max_steps: int, **trainer_kwargs
) -> pl.Trainer:
    options = {
        "accelerator": "cpu",
        "logger": False,
        "enable_checkpointing": False,
        "enable_progress_bar": False,
        "enable_model_summary": False,
        **trainer_kwargs,
    }
    trainer = pl.Trainer(max_steps=max_steps, **options)
    trainer.fit(module, train_dataloaders=whole_batches(make_batch, max_steps))
    return trainer


def success_after_training(
    algorithm: type[pl.LightningModule], env_spec: dict, max_steps: int, **hyperparameters
) -> float:
    """:meth:`InstructionBandit.success_rate` of ``algorithm`` (small networks) after ``max_steps`` seeded updates."""
    pl.seed_everything(0)
    bandit = InstructionBandit(env_spec)
    module = fit(algorithm(env_spec, **SMALL, **hyperparameters), bandit.batch, max_steps=max_steps).lightning_module
    return bandit.success_rate(module)


def last_layer(network: torch.nn.Module) -> torch.nn.Linear:
    return [layer for layer in network.modules() if isinstance(layer, torch.nn.Linear)][-1]
