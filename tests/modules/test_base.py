import csv

import lightning.pytorch as pl
import pytest
import torch
from lightning.pytorch.loggers import CSVLogger

from imaginebench.env_spec import EnvSpec
from imaginebench.errors import UserInputError
from modules.bc import BC
from modules.bcq import BCQ
from modules.combo import COMBO
from modules.cql import CQL
from modules.discrete_bcq import DiscreteBCQ
from modules.discrete_cql import DiscreteCQL
from modules.iql import IQL
from modules.prdc import PRDC
from modules.td3_bc import TD3BC
from tests.modules.synthetic import CONTINUOUS, DISCRETE, SMALL, InstructionBandit, fit

FAST = {"COMBO": {"num_dynamics_models": 2, "num_action_samples": 2}, "BCQ": {"num_candidates": 4}}
"""Smaller settings that keep the per-algorithm checks quick."""
CASES = [
    *[(algorithm, DISCRETE) for algorithm in (BC, DiscreteCQL, DiscreteBCQ, IQL)],
    *[(algorithm, CONTINUOUS) for algorithm in (BC, CQL, BCQ, IQL, TD3BC, PRDC, COMBO)],
]
CASE_IDS = [f"{algorithm.__name__}-{spec['action_kind']}" for algorithm, spec in CASES]


class CountBatches(pl.Callback):
    def __init__(self) -> None:
        self.batches = 0

    def on_train_batch_end(self, *args) -> None:
        self.batches += 1


def build(algorithm: type, env_spec: dict, bandit: InstructionBandit, **kwargs) -> pl.LightningModule:
    module = algorithm(env_spec, **SMALL, **FAST.get(algorithm.__name__, {}), **kwargs)
    if isinstance(module, PRDC):
        module.index_dataset(prdc_dataset(env_spec))
    return module


def prdc_dataset(env_spec: dict):
    """The same transitions at every call (a datamodule's buffers would provide them)."""
    return InstructionBandit(env_spec, seed=1).batch(256)


def seeded(function, *args):
    torch.manual_seed(1)  # several algorithms sample actions or noise inside their losses
    return function(*args)


@pytest.mark.parametrize("algorithm, env_spec", CASES, ids=CASE_IDS)
def test_one_global_step_per_batch_and_checkpoint_round_trip(algorithm, env_spec, tmp_path):
    pl.seed_everything(0)
    bandit = InstructionBandit(env_spec)
    counter = CountBatches()
    trainer = fit(build(algorithm, env_spec, bandit), lambda: bandit.batch(16), max_steps=5, callbacks=[counter])
    assert trainer.global_step == counter.batches == 5  # actor, critics, temperature, models step together
    trainable = {name for name, parameter in trainer.lightning_module.named_parameters() if parameter.requires_grad}
    assert not {name for name in trainable if "target_" in name}  # running a target left its weights trainable

    trainer.save_checkpoint(tmp_path / "last.ckpt")
    module = trainer.lightning_module.eval()
    restored = algorithm.load_from_checkpoint(tmp_path / "last.ckpt").eval()
    if isinstance(module, PRDC):
        restored.index_dataset(prdc_dataset(env_spec))
    state, embedding, _ = bandit.observations(32)
    with torch.no_grad():
        action = seeded(module.act, state, embedding)
        torch.testing.assert_close(seeded(restored.act, state, embedding), action, rtol=0, atol=0)
    batch = bandit.batch(16)
    for name, value in seeded(module.losses, batch.clone()).items():  # resuming gives identical losses
        torch.testing.assert_close(seeded(restored.losses, batch.clone())[name], value, rtol=0, atol=0, msg=name)
    spec = EnvSpec(**env_spec)
    if spec.is_discrete:
        assert action.dtype == torch.int64 and action.shape == (32,)
        assert 0 <= action.min() and action.max() < spec.num_actions
    else:
        assert action.dtype == torch.float32 and action.shape == (32, spec.action_dim)
        assert action.abs().max() <= spec.action_bound
    if module.target_updater is not None:
        assert restored.target_updater.state_dict() == module.target_updater.state_dict()


SOFT_UPDATES = [(algorithm, spec) for algorithm, spec in CASES if algorithm in (IQL, TD3BC, PRDC, COMBO, BCQ, CQL)]


@pytest.mark.parametrize(
    "algorithm, env_spec", SOFT_UPDATES, ids=[f"{a.__name__}-{s['action_kind']}" for a, s in SOFT_UPDATES]
)
def test_soft_target_update_moves_every_target_by_tau(algorithm, env_spec):
    module = build(algorithm, env_spec, InstructionBandit(env_spec), tau=0.25)
    loss = module.target_updater.loss_module
    names = [name for name, _ in loss.named_children() if name.startswith("target_")]
    before = {name: getattr(loss, name).clone() for name in names}
    with torch.no_grad():
        for name in names:  # parameters only: buffers such as action bounds are not trained
            getattr(loss, name.removeprefix("target_")).apply(lambda p: p.add_(1.0) if p.requires_grad else p)
    module.target_updater.step()
    for name in names:
        online = getattr(loss, name.removeprefix("target_"))
        expected = before[name].apply(
            lambda old, new: 0.75 * old + 0.25 * new.data if new.requires_grad else old, online
        )
        torch.testing.assert_close(getattr(loss, name).to_dict(), expected.to_dict())


def test_normalisation_uses_the_given_statistics_in_batches_and_in_act():
    module = IQL(CONTINUOUS, **SMALL)
    assert (
        module.normalizes_states and not IQL(DISCRETE, **SMALL).normalizes_states
    )  # on by default for continuous only
    batch = InstructionBandit(CONTINUOUS).batch(8)
    module.set_state_statistics(torch.tensor([1.0, -2.0, 0.5]), torch.tensor([2.0, 4.0, 0.5]))
    normalised = module.on_after_batch_transfer(batch, 0)
    torch.testing.assert_close(
        normalised["state"], (batch["state"] - torch.tensor([1.0, -2.0, 0.5])) / torch.tensor([2.0, 4.0, 0.5])
    )
    torch.testing.assert_close(
        normalised["next", "state"] * torch.tensor([2.0, 4.0, 0.5]) + torch.tensor([1.0, -2.0, 0.5]),
        batch["next", "state"],
    )
    restored = IQL(CONTINUOUS, **SMALL)
    restored.load_state_dict(module.state_dict())  # the statistics travel with the weights
    torch.testing.assert_close(restored.state_std, module.state_std)
    with torch.no_grad():
        acted = module.act(batch["state"], batch["instruction_embedding"])
        torch.testing.assert_close(restored.act(batch["state"], batch["instruction_embedding"]), acted)
        unnormalised = module.policy(batch.select("state", "instruction_embedding"))["action"]
    assert not torch.allclose(acted, unnormalised)  # act normalised its input


def test_logs_updates_per_second_and_per_source_diagnostics(tmp_path):
    bandit = InstructionBandit(DISCRETE)
    logger = CSVLogger(tmp_path, name="run")
    fit(DiscreteCQL(DISCRETE, **SMALL), lambda: bandit.batch(16), max_steps=6, logger=logger, log_every_n_steps=2)
    with open(f"{logger.log_dir}/metrics.csv") as file:
        rows = list(csv.DictReader(file))
    logged = {key for row in rows for key, value in row.items() if value}
    assert {"time/updates_per_s", "train/td_error/real", "train/td_error/imaginary", "train/loss_cql"} <= logged
    assert all(float(row["time/updates_per_s"]) > 0 for row in rows if row["time/updates_per_s"])


@pytest.mark.parametrize(
    ("algorithm", "spec", "counterpart"),
    [
        (BCQ, DISCRETE, "modules.discrete_bcq.DiscreteBCQ"),
        (CQL, DISCRETE, "modules.discrete_cql.DiscreteCQL"),
        (DiscreteBCQ, CONTINUOUS, "modules.bcq.BCQ"),
        (DiscreteCQL, CONTINUOUS, "modules.cql.CQL"),
        (TD3BC, DISCRETE, "another algorithm"),
        (PRDC, DISCRETE, "another algorithm"),
        (COMBO, DISCRETE, "another algorithm"),
    ],
    ids=lambda value: value.__name__ if isinstance(value, type) else None,
)
def test_an_algorithm_for_one_action_kind_refuses_the_other_in_one_line(algorithm, spec, counterpart):
    with pytest.raises(UserInputError, match=rf"{algorithm.__name__} learns \w+ actions .*; use {counterpart}"):
        algorithm(spec, **SMALL)
