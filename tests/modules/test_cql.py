import lightning.pytorch as pl
import pytest
import torch
from tensordict import TensorDict
from tensordict import assert_allclose_td as assert_close

from modules.cql import CQL
from tests.modules.synthetic import CONTINUOUS, SMALL, InstructionBandit, fit


def test_continuous_cql_trains_with_finite_losses_and_soft_target_moves_by_tau():
    pl.seed_everything(0)
    bandit = InstructionBandit(CONTINUOUS)
    module = CQL(CONTINUOUS, gamma=0.9, tau=0.1, **SMALL)
    assert module.hparams.conservative_weight == 5.0 and module.hparams.target_update_interval == 0
    assert float(module.loss.value_estimator.gamma) == pytest.approx(0.9)
    target_before = module.loss.target_qvalue_network_params.clone()

    fit(module, lambda: bandit.batch(16), max_steps=1)
    expected = target_before.apply(lambda old, new: 0.9 * old + 0.1 * new, module.loss.qvalue_network_params.data)
    assert_close(module.loss.target_qvalue_network_params, expected)

    fit(module, lambda: bandit.batch(16), max_steps=10)
    losses = module.loss(bandit.batch(16))
    assert all(torch.isfinite(value).all() for value in losses.values())


def test_continuous_penalty_is_per_state():
    """Each state's penalty depends on that state only (TorchRL 0.14.1's mixes all states' log-sum-exps)."""
    torch.manual_seed(0)
    module = CQL(CONTINUOUS, **SMALL)
    batch = InstructionBandit(CONTINUOUS).batch(8)
    changed = batch.clone()
    changed["state"][3] += 1.0

    def penalty(data: TensorDict) -> torch.Tensor:
        torch.manual_seed(1)  # the same uniform and policy proposals for both batches
        data = data.clone()
        module.loss.q_loss(data)
        module.loss.cql_loss(data)
        return data["cql_q1_loss"] + data["cql_q2_loss"]

    before, after = penalty(batch), penalty(changed)
    assert before.shape == (8,)
    unchanged = torch.arange(8) != 3
    torch.testing.assert_close(after[unchanged], before[unchanged])
    assert not torch.isclose(after[3], before[3])
