"""Evaluates the policy in the real environments every N epochs and reports per-level success."""

from __future__ import annotations

import json
from pathlib import Path

import lightning.pytorch as pl
from lightning.pytorch.utilities import rank_zero_only

from imaginebench.errors import check_at_least
from imaginebench.evaluation import EvaluationEnvs, LevelResult, format_level_table
from imaginebench.levels import LEVELS, resolve_level
from imaginebench.plotting import headless_pyplot
from imaginebench.provenance import source_commit
from imaginebench.storage import atomic_write_text


class SuccessRateEvaluation(pl.Callback):
    """Logs ``success_rate/<level>``, per-task success, return and length to the logger.

    Runs on rank 0 only (evaluation needs no gradient sync); writes ``results.json`` in the
    log directory after every evaluation, a success-per-epoch plot, and prints a per-level
    table when training ends. ``workers``: processes stepping the envs (``None``: the domain's default,
    1: in this process; see :class:`~imaginebench.evaluation.EvaluationEnvs`); results do not depend on it.
    The envs (and workers) are built at the first evaluation and kept until the stage ends.
    """

    def __init__(
        self,
        levels: list[str] = list(LEVELS),
        episodes_per_task: int = 20,
        every_n_epochs: int = 1,
        seed: int = 100_000,
        workers: int | None = None,
    ) -> None:
        check_at_least(1, {"workers": workers})  # at configuration, not after the first epoch
        self.levels = [resolve_level(level) for level in levels]
        self.episodes_per_task = episodes_per_task
        self.every_n_epochs = every_n_epochs
        self.seed = seed
        self.workers = workers
        self.history: list[dict] = []
        self.latest: dict[str, LevelResult] = {}
        self.log_dir = Path(".")
        self.commit: str | None = None
        self._envs: EvaluationEnvs | None = None

    def setup(self, trainer: pl.Trainer, pl_module: pl.LightningModule, stage: str) -> None:
        # trainer.log_dir is a collective under DDP: every rank must ask, so never inside rank-zero-only code.
        self.log_dir = Path(trainer.log_dir or trainer.default_root_dir)
        self.commit = source_commit()  # the code this process runs, read once at its start

    def on_train_epoch_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        last_epoch = trainer.max_epochs is not None and trainer.current_epoch + 1 >= trainer.max_epochs
        if (trainer.current_epoch + 1) % self.every_n_epochs == 0 or last_epoch or trainer.should_stop:
            self._evaluate(trainer, pl_module)

    def on_validation_epoch_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        if not trainer.sanity_checking and trainer.state.fn != "fit":
            self._evaluate(trainer, pl_module)

    def on_test_epoch_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        self._evaluate(trainer, pl_module)

    @rank_zero_only
    def _evaluate(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        data = trainer.datamodule
        was_training = pl_module.training
        pl_module.eval()
        if self._envs is None:
            self._envs = EvaluationEnvs(
                data.env_id, self.levels, self.episodes_per_task, data.encoder, data.pooling, self.workers
            )
        results = self._envs.evaluate(pl_module.act, self.seed, device=pl_module.device)
        pl_module.train(was_training)
        self.latest = results
        metrics = {}
        for level, result in results.items():
            metrics[f"success_rate/{level}"] = result.success_rate
            metrics[f"return/{level}"] = result.mean_return
            metrics[f"episode_length/{level}"] = result.mean_length
            for task, task_result in result.per_task.items():
                metrics[f"success_rate/{level}/{task}"] = task_result.success_rate
        if trainer.logger is not None:
            trainer.logger.log_metrics(metrics, step=trainer.global_step)
        self.history.append(
            {
                "epoch": trainer.current_epoch,
                "global_step": trainer.global_step,
                **{f"success_rate/{k}": v.success_rate for k, v in results.items()},
            }
        )
        self._write_results(trainer, pl_module)

    def _write_results(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        data = trainer.datamodule
        report = {
            "env_id": data.env_id,
            "algorithm": type(pl_module).__name__,
            "epoch": trainer.current_epoch,
            "global_step": trainer.global_step,
            "episodes_per_task": self.episodes_per_task,
            "batch_size": getattr(data, "batch_size", None),
            "seed": self.seed,
            "commit": self.commit,
            "datasets": getattr(data, "dataset_paths", None),
            "levels": {level: result.to_dict() for level, result in self.latest.items()},
            "history": self.history,
        }
        atomic_write_text(json.dumps(report, indent=2), self.log_dir / "results.json")

    def teardown(self, trainer: pl.Trainer, pl_module: pl.LightningModule, stage: str) -> None:
        self._close_envs()

    def on_exception(self, trainer: pl.Trainer, pl_module: pl.LightningModule, exception: BaseException) -> None:
        self._close_envs()

    def _close_envs(self) -> None:
        if self._envs is not None:
            self._envs, envs = None, self._envs
            envs.close()

    def state_dict(self) -> dict:
        """The history, so a run resumed with ``--ckpt_path last`` keeps its earlier evaluations in ``results.json``."""
        return {"history": self.history}

    def load_state_dict(self, state_dict: dict) -> None:
        self.history = list(state_dict["history"])

    @rank_zero_only
    def on_fit_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        if not self.latest:
            return
        print(
            f"\nSuccess per level ({trainer.datamodule.env_id}, {type(pl_module).__name__}, epoch {trainer.current_epoch}):"
        )
        print(format_level_table(self.latest))
        self._plot(trainer)

    def _plot(self, trainer: pl.Trainer) -> None:
        plt = headless_pyplot()

        fig, ax = plt.subplots(figsize=(6, 4))
        for level in self.levels:
            ax.plot(
                [h["global_step"] for h in self.history],
                [h[f"success_rate/{level}"] for h in self.history],
                marker="o",
                label=level,
            )
        ax.set(xlabel="gradient updates", ylabel="success rate", ylim=(-0.02, 1.02), title=trainer.datamodule.env_id)
        ax.legend()
        fig.tight_layout()
        fig.savefig(self.log_dir / "success_rate.png", dpi=100)
        plt.close(fig)
