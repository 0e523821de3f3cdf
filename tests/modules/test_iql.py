import copy

import pytest
import torch
from tensordict import TensorDict
from tensordict.nn import TensorDictSequential
from torchrl.modules import ValueOperator
from torchrl.objectives import DiscreteIQLLoss, IQLLoss, ValueEstimators

from modules.iql import IQL
from modules.networks import OBSERVATION, policy_input
from tests.modules.ensembles import critic_modules_like, ensemble_gradients, move_targets_apart, target_copy
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
    base = module.losses(batch.clone())["loss_value"].mean()
    with torch.no_grad():
        for parameter in module.value.parameters():
            parameter.zero_()
        module.value[-1].bias.fill_(100.0)  # V far above every Q
    above = module.losses(batch.clone())["loss_value"].mean()
    with torch.no_grad():
        module.value[-1].bias.fill_(-100.0)  # V far below every Q
    below = module.losses(batch.clone())["loss_value"].mean()
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


def torchrl_reference(module: IQL) -> IQLLoss:
    """TorchRL's ``IQLLoss`` (``DiscreteIQLLoss``) with the module's weights, its target critics moved apart first."""
    move_targets_apart(module.targets.target_critics_params)
    target_critics = critic_modules_like(target_copy(module.targets, "critics"))
    value = TensorDictSequential(policy_input(), ValueOperator(copy.deepcopy(module.value), in_keys=[OBSERVATION]))
    options = {"loss_function": "l2", "expectile": 0.7, "temperature": 3.0, "reduction": "none"}
    actor = copy.deepcopy(module.policy)
    if module.env_spec.is_discrete:
        loss = DiscreteIQLLoss(actor, target_critics, value, action_space="categorical", **options)
    else:
        loss = IQLLoss(actor, target_critics, value, **options)
    loss.make_value_estimator(ValueEstimators.TD0, gamma=0.99)
    loss.qvalue_network_params.data.update_(TensorDict.from_modules(*critic_modules_like(module.critics)).data)
    return loss


@pytest.mark.parametrize("env_spec", [DISCRETE, CONTINUOUS], ids=["discrete", "continuous"])
@pytest.mark.filterwarnings("ignore:IQLLoss with reduction='none'")
def test_losses_and_gradients_are_torchrls_iql_loss(env_spec):
    torch.manual_seed(0)
    module = IQL(env_spec, **SMALL)
    reference = torchrl_reference(module)
    batch = InstructionBandit(env_spec).batch(32)
    batch["next", "terminated"][::2] = False  # the bandit ends every episode: bootstrap half the rows
    ours, theirs = module.losses(batch.clone()), reference(batch.clone())
    for name in ("loss_actor", "loss_qvalue", "loss_value"):
        torch.testing.assert_close(ours[name], theirs[name], msg=name)
    sum(value.mean() for value in ours.values()).backward()
    sum(theirs[name].mean() for name in ("loss_actor", "loss_qvalue", "loss_value")).backward()
    for index in range(2):
        torch.testing.assert_close(
            ensemble_gradients(module.critics, index),
            list(reference.qvalue_network_params.grad[index].flatten_keys(".").values()),
        )
    for ours_network, their_parameters in [
        (module.value, reference.value_network_params),
        (module.policy, reference.actor_network_params),
    ]:
        their_gradients = [g for g in their_parameters.grad.flatten_keys(".").values() if g is not None]
        torch.testing.assert_close([p.grad for p in ours_network.parameters()], their_gradients)
