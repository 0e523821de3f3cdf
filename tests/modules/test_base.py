import csv

import lightning.pytorch as pl
import pytest
import torch
from lightning.pytorch.loggers import CSVLogger

from imaginebench.env_spec import EnvSpec
from modules.bc import BC
from modules.cql import CQL
from tests.modules.synthetic import CONTINUOUS, DISCRETE, SMALL, InstructionBandit, fit


class CountBatches(pl.Callback):
    def __init__(self) -> None:
        self.batches = 0

    def on_train_batch_end(self, *args) -> None:
        self.batches += 1


@pytest.mark.parametrize("algorithm", [BC, CQL])
@pytest.mark.parametrize("env_spec", [DISCRETE, CONTINUOUS], ids=["discrete", "continuous"])
def test_one_global_step_per_batch_and_checkpoint_round_trip(algorithm, env_spec, tmp_path):
    pl.seed_everything(0)
    bandit = InstructionBandit(env_spec)
    counter = CountBatches()
    trainer = fit(algorithm(env_spec, **SMALL), lambda: bandit.batch(16), max_steps=5, callbacks=[counter])
    assert trainer.global_step == counter.batches == 5  # actor, critics and temperature step together

    trainer.save_checkpoint(tmp_path / "last.ckpt")
    module = trainer.lightning_module.eval()
    restored = algorithm.load_from_checkpoint(tmp_path / "last.ckpt").eval()
    state, embedding, _ = bandit.observations(32)
    with torch.no_grad():
        action = module.act(state, embedding)
        torch.testing.assert_close(restored.act(state, embedding), action, rtol=0, atol=0)
    spec = EnvSpec(**env_spec)
    if spec.is_discrete:
        assert action.dtype == torch.int64 and action.shape == (32,)
        assert 0 <= action.min() and action.max() < spec.num_actions
    else:
        assert action.dtype == torch.float32 and action.shape == (32, spec.action_dim)
        assert action.abs().max() <= spec.action_bound
    if module.target_updater is not None:
        assert restored.target_updater.state_dict() == module.target_updater.state_dict()


def test_logs_updates_per_second_and_per_source_diagnostics(tmp_path):
    bandit = InstructionBandit(DISCRETE)
    logger = CSVLogger(tmp_path, name="run")
    fit(CQL(DISCRETE, **SMALL), lambda: bandit.batch(16), max_steps=6, logger=logger, log_every_n_steps=2)
    with open(f"{logger.log_dir}/metrics.csv") as file:
        rows = list(csv.DictReader(file))
    logged = {key for row in rows for key, value in row.items() if value}
    assert {"time/updates_per_s", "train/td_error/real", "train/td_error/imaginary", "train/loss_cql"} <= logged
    assert all(float(row["time/updates_per_s"]) > 0 for row in rows if row["time/updates_per_s"])
