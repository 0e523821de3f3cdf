"""A test-only callback: records each rank's first batch so a DDP test can compare streams."""

from pathlib import Path

import lightning.pytorch as pl
import torch


class FirstBatchProbe(pl.Callback):
    def __init__(self, out_dir: str) -> None:
        self.out_dir = Path(out_dir)

    def on_train_batch_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule, batch, batch_idx: int) -> None:
        if trainer.global_step == 0:
            self.out_dir.mkdir(parents=True, exist_ok=True)
            torch.save(
                {"state": batch["state"].cpu(), "world_size": trainer.world_size},
                self.out_dir / f"rank{trainer.global_rank}.pt",
            )
