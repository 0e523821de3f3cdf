"""The LightningModule every offline RL algorithm derives from."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, ClassVar

import torch
from lightning.pytorch import LightningModule
from tensordict import TensorDict, TensorDictBase
from tensordict.nn import TensorDictModuleBase
from torch import Tensor
from torchrl.envs.utils import ExplorationType, set_exploration_type
from torchrl.objectives import HardUpdate
from torchrl.objectives.utils import TargetNetUpdater

from imaginebench.datasets.episodes import SOURCES
from imaginebench.env_spec import EnvSpec
from imaginebench.errors import UserInputError
from imaginebench.upstream.lightning_logging import lightning_logs_this_step
from imaginebench.upstream.torchrl_soft_update import ForeachSoftUpdate


class OfflineRLModule(LightningModule):
    """Env spec, greedy ``act``, and exactly one optimizer step per batch.

    Lightning counts every ``optimizer.step()`` as a global step (Lightning-AI/pytorch-lightning#17958),
    so an actor-critic stepping three optimizers would stop at a third of ``max_steps``. Each
    algorithm therefore returns all its networks from :meth:`parameter_groups` (one learning rate per
    group), they share one Adam, and ``training_step`` calls :meth:`gradient_step` once: then
    ``trainer.global_step`` equals the number of gradient updates and of batches. One backward
    through the summed losses gives each network the gradient of its own loss, because each TorchRL
    sub-loss reaches only its own parameters (the actor sees the critics as they were before the step).

    Subclasses set ``self.policy`` (a TensorDict module writing the greedy or deterministic
    ``action``) and, if they have target networks, ``self.target_updater``.

    ``normalize_states`` (default: on for continuous actions, off for discrete ones) standardises
    ``state`` and ``next.state`` of every batch, and the states :meth:`act` receives, with the mean
    and standard deviation of the real data's states (CORL and TD3+BC do this for MuJoCo-like
    states). The statistics are buffers, so checkpoints carry them to evaluation.
    """

    policy: TensorDictModuleBase
    target_updater: TargetNetUpdater | None = None
    action_kinds: ClassVar[tuple[str, ...]] = ("discrete", "continuous")
    """The action kinds the algorithm learns; one paper variant per class (``DiscreteBCQ`` and ``BCQ``)."""
    other_action_kind: ClassVar[str] = ""
    """The class of the same algorithm for the other action kind, named in the error for the wrong one."""

    def __init__(self, env_spec: dict, normalize_states: bool | None = None) -> None:
        super().__init__()
        self.env_spec = EnvSpec(**env_spec)
        if self.env_spec.action_kind not in self.action_kinds:
            raise UserInputError(
                f"model.class_path: {type(self).__name__} learns {' or '.join(self.action_kinds)} actions and this "
                f"env's are {self.env_spec.action_kind}; use {self.other_action_kind or 'another algorithm (docs/algorithms.md)'}"
            )
        self.automatic_optimization = False
        self._speed_window: tuple[int, float] | None = None
        self.normalizes_states = not self.env_spec.is_discrete if normalize_states is None else normalize_states
        self.register_buffer("state_mean", torch.zeros(self.env_spec.state_dim))
        self.register_buffer("state_std", torch.ones(self.env_spec.state_dim))

    def setup(self, stage: str) -> None:
        datamodule = self._trainer.datamodule if self._trainer is not None else None
        if self.normalizes_states and stage == "fit" and hasattr(datamodule, "state_statistics"):
            mean, std = datamodule.state_statistics()
            self.set_state_statistics(mean, std)

    def set_state_statistics(self, mean: Tensor, std: Tensor) -> None:
        self.state_mean.copy_(mean)
        self.state_std.copy_(std)

    def normalize(self, state: Tensor) -> Tensor:
        return (state - self.state_mean) / self.state_std if self.normalizes_states else state

    def on_after_batch_transfer(self, batch: TensorDictBase, dataloader_idx: int) -> TensorDictBase:
        if self.normalizes_states:
            batch = batch.clone(False)  # the sampler's tensors stay untouched
            batch["state"] = self.normalize(batch["state"])
            batch["next", "state"] = self.normalize(batch["next", "state"])
        return batch

    def act(self, state: Tensor, instruction_embedding: Tensor) -> Tensor:
        """Greedy (discrete, int64 ``(B,)``) or deterministic (continuous, ``(B, A)``) actions."""
        observation = TensorDict(
            {"state": self.normalize(state), "instruction_embedding": instruction_embedding},
            batch_size=state.shape[:-1],
        )
        with set_exploration_type(ExplorationType.DETERMINISTIC):
            return self.policy(observation).get("action")

    def bootstrapped(self, batch: TensorDictBase, next_value: Tensor) -> Tensor:
        """The TD target ``r + γ (1 − terminated) V(s')`` (``hparams.gamma``): truncation at a time limit
        still bootstraps, only ``terminated`` stops it."""
        not_terminated = (~batch["next", "terminated"]).float()
        return batch["next", "reward"] + self.hparams.gamma * not_terminated * next_value

    def make_target_updater(self, targets: Any, update_interval: int, tau: float) -> TargetNetUpdater:
        """``update_interval`` > 0: copy the targets every that many updates (DQN); 0: move them by
        ``tau`` each update (Polyak; TorchRL's ``SoftUpdate`` as one foreach lerp). TorchRL's ``HardUpdate``
        copies on the step after its counter reaches its interval, hence the ``- 1``."""
        if update_interval > 0:
            return HardUpdate(targets, value_network_update_interval=update_interval - 1)
        return ForeachSoftUpdate(targets, tau=tau)

    def parameter_groups(self) -> list[dict[str, Any]]:
        """``[{"params": ..., "lr": ...}, ...]``: every trainable parameter in exactly one group."""
        raise NotImplementedError

    def losses(self, batch: TensorDictBase) -> Mapping[str, Tensor]:
        """The algorithm's loss terms on ``batch`` (scalars, or per-row values that are averaged)."""
        raise NotImplementedError

    def validation_step(self, batch: TensorDictBase, batch_idx: int) -> None:
        self._log_losses("val", batch)

    def test_step(self, batch: TensorDictBase, batch_idx: int) -> None:
        self._log_losses("test", batch)

    def _log_losses(self, stage: str, batch: TensorDictBase) -> None:
        """Loss terms on sampled batches; the policy's real test is the environment evaluation callback."""
        with torch.enable_grad():  # some TorchRL losses differentiate internally
            terms = self.losses(batch)
        self.log_dict(
            {f"{stage}/{name}": value.detach().mean() for name, value in terms.items()}, batch_size=batch.shape[0]
        )

    def configure_optimizers(self) -> torch.optim.Optimizer:
        groups = [{**group, "params": list(group["params"])} for group in self.parameter_groups()]
        grouped = {id(p) for group in groups for p in group["params"]}
        missing = [name for name, p in self.named_parameters() if p.requires_grad and id(p) not in grouped]
        if missing:
            raise ValueError(f"{type(self).__name__}.parameter_groups() leaves out {missing}")
        return torch.optim.Adam(
            groups, fused=True
        )  # one kernel for all parameters: ~2.5× faster steps on CPU than the per-tensor loop

    def gradient_step(self, loss: Tensor) -> None:
        """The batch's single optimizer step (see the class docstring). The backward pass runs outside
        autocast (``training_step`` runs inside it under ``bf16-mixed``), so each product's gradient
        takes the dtype of its forward, as torch's autocast guide asks: inside, the float32 output
        layers' gradients were cast down to bfloat16 and back, a copy of every large activation."""
        optimizer = self.optimizers()
        optimizer.zero_grad()
        with torch.autocast(self.device.type, enabled=False):
            self.manual_backward(loss)
        optimizer.step()

    def log_train_metrics(self, metrics: Mapping[str, Tensor] | TensorDictBase) -> None:
        """``train/<name>`` for every scalar, on the steps the logger writes only: each
        ``self.log`` call costs about a millisecond, as much as a small network's update."""
        if self._logs_this_step():
            self.log_dict({f"train/{name}": value.detach() for name, value in metrics.items() if value.ndim == 0})

    def log_per_source(self, name: str, per_row: Tensor, source: Tensor) -> None:
        """``train/<name>/real`` and ``train/<name>/imaginary``: does imagined data train differently?"""
        if not self._logs_this_step():
            return
        per_row = per_row.detach().reshape(source.shape[0], -1).mean(-1)
        for index, label in enumerate(SOURCES):
            rows = source == index
            if rows.any():  # a device sync, hence only on logging steps
                self.log(f"train/{name}/{label}", per_row[rows].mean())

    def on_train_epoch_start(self) -> None:
        self._speed_window = None  # evaluation between epochs is not training time

    def on_train_batch_end(self, outputs: Any, batch: Any, batch_idx: int) -> None:
        now = time.perf_counter()
        if self._speed_window is None:
            self._speed_window = (self.global_step, now)
        elif self._logs_this_step():
            start_step, start_time = self._speed_window
            self.log("time/updates_per_s", (self.global_step - start_step) / (now - start_time))
            self._speed_window = (self.global_step, now)

    def _logs_this_step(self) -> bool:
        """Whether ``self.log(on_step=True)`` is written now."""
        return self._trainer is not None and lightning_logs_this_step(self.trainer)

    def on_save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        if self.target_updater is not None:  # a hard update's step counter lives outside the state dict
            checkpoint["target_updater"] = self.target_updater.state_dict()

    def on_load_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        """Refuses, in one line, weights laid out for other networks (a checkpoint of an older imaginebench whose
        critics were TorchRL's, or one of another algorithm): torch's own error lists every key, hundreds of lines."""
        built = set(self.state_dict())
        stored = set(checkpoint.get("state_dict", built))
        if built != stored:
            missing, unexpected = sorted(built - stored), sorted(stored - built)
            raise UserInputError(
                f"the checkpoint's weights do not fit {type(self).__name__} as this version builds it: "
                f"{len(missing)} missing (first {missing[:2]}), {len(unexpected)} unexpected (first {unexpected[:2]}); "
                "was it written by an older imaginebench or another algorithm? Train anew, or evaluate it at the "
                "commit that wrote it"
            )
        if self.target_updater is not None and "target_updater" in checkpoint:
            self.target_updater.load_state_dict(checkpoint["target_updater"])
