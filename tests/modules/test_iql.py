import pytest
import torch

from imaginebench.upstream.torchrl_iql import TargetQOncePerBatch
from modules.iql import IQL
from tests.modules.synthetic import CONTINUOUS, DISCRETE, SMALL, InstructionBandit, success_after_training


@pytest.mark.parametrize("env_spec, threshold", [(DISCRETE, 0.9), (CONTINUOUS, 0.9)], ids=["discrete", "continuous"])
def test_iql_solves_the_bandit(env_spec, threshold):
    assert (
        success_after_training(IQL, env_spec, max_steps=300) > threshold
    )  # ignoring instruction or state caps it at 0.5 / 0


def test_value_fits_an_upper_expectile_of_q():
    """Over-estimates of Q by V cost (1 − expectile), under-estimates cost expectile (Eq. 5)."""
    torch.manual_seed(0)
    module = IQL(DISCRETE, expectile=0.9, **SMALL)
    batch = InstructionBandit(DISCRETE).batch(32)
    base = module.loss.value_loss(batch.clone())[0].mean()
    with torch.no_grad():
        module.loss.value_network_params.apply(lambda p: p.zero_())
        bias = module.loss.value_network_params.get(("module", "1", "module", str(len(SMALL["hidden_sizes"]) * 2)))
        bias["bias"].fill_(100.0)  # V far above every Q
    above = module.loss.value_loss(batch.clone())[0].mean()
    with torch.no_grad():
        bias["bias"].fill_(-100.0)  # V far below every Q
    below = module.loss.value_loss(batch.clone())[0].mean()
    assert torch.isfinite(base)
    assert float(below / above) == pytest.approx(0.9 / 0.1, rel=0.05)


def test_continuous_actor_scores_actions_on_the_bounds():
    """Expert data often sits on the action bounds: advantage-weighted regression needs their
    log-density comparable to that of interior actions (a TanhNormal's plunges there, by ~20 nats)."""
    torch.manual_seed(0)
    module = IQL(CONTINUOUS, **SMALL)
    batch = InstructionBandit(CONTINUOUS).batch(16)
    on_bounds = torch.ones_like(batch["action"]).index_fill_(0, torch.arange(8), -1.0)
    dist = module.policy.get_dist(batch.clone())
    assert (dist.log_prob(on_bounds) > dist.log_prob(torch.zeros_like(on_bounds)) - 2.0).all()
    assert module.act(batch["state"], batch["instruction_embedding"]).abs().max() <= 1.0


@pytest.mark.parametrize("env_spec", [DISCRETE, CONTINUOUS], ids=["discrete", "continuous"])
def test_target_critics_run_once_per_batch_and_the_losses_stay_torchrls(env_spec):
    """TorchRL's actor and value losses each run the target critics on the same (s, a); ours reuses the first run."""
    torch.manual_seed(0)
    module = IQL(env_spec, **SMALL)
    batch = InstructionBandit(env_spec).batch(32)
    loss = module.loss
    target_runs = []
    evaluate = loss._vmap_qvalue_networkN0

    def counted(inputs, params):
        target_runs.append(params is loss.target_qvalue_network_params)
        return evaluate(inputs, params)

    loss._vmap_qvalue_networkN0 = counted
    ours = loss(batch.clone())
    assert target_runs.count(True) == 1
    torchrls = super(TargetQOncePerBatch, loss).forward(batch.clone())  # TorchRL's own, without the reuse
    assert target_runs.count(True) == 3
    for key in ("loss_actor", "loss_qvalue", "loss_value"):
        torch.testing.assert_close(ours[key], torchrls[key], rtol=0, atol=0)
