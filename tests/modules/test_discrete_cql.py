import copy

import lightning.pytorch as pl
import pytest
import torch
from tensordict import TensorDict
from tensordict import assert_allclose_td as assert_close
from torchrl.modules import QValueActor
from torchrl.objectives import DiscreteCQLLoss
from torchrl.objectives.value import TD0Estimator

from modules.discrete_cql import DiscreteCQL
from modules.networks import action_spec, discrete_head, observation
from tests.modules.ensembles import move_targets_apart, target_copy
from tests.modules.synthetic import DISCRETE, SMALL, InstructionBandit, fit, success_after_training


def q_values(module: DiscreteCQL, state: torch.Tensor, embedding: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return module.q_network(torch.cat([state, embedding], -1))


@pytest.mark.parametrize("terminated, truncated", [(True, False), (False, False), (False, True)])
def test_discrete_td_target_is_r_plus_discounted_max_of_the_target_network(terminated, truncated):
    torch.manual_seed(0)
    module = DiscreteCQL(DISCRETE, gamma=0.9)
    target_net = copy.deepcopy(module.q_network)
    with torch.no_grad():  # the online network moves on; the target must not follow it
        for p in module.policy.parameters():
            p.add_(torch.randn_like(p))
    batch = InstructionBandit(DISCRETE).batch(1)
    batch["next", "reward"].fill_(0.5)
    batch["next", "terminated"].fill_(terminated)
    batch["next", "truncated"].fill_(truncated)
    batch["next", "done"].fill_(terminated or truncated)

    target = module.td_target(batch).squeeze()

    next_q = target_net(observation(batch, ("next",))).max(-1).values.squeeze()
    expected = 0.5 if terminated else 0.5 + 0.9 * next_q  # truncation at the time limit still bootstraps
    torch.testing.assert_close(target, torch.as_tensor(expected))


def test_discrete_conservative_penalty_pushes_unseen_actions_below_data_actions():
    """With zero reward, only the penalty can separate the dataset's action from the others."""

    def gap_after_training(conservative_weight: float) -> float:
        pl.seed_everything(0, verbose=False)
        bandit = InstructionBandit(DISCRETE)

        def zero_reward_batch() -> TensorDict:
            batch = bandit.batch()
            batch["next", "reward"].zero_()
            return batch

        module = DiscreteCQL(DISCRETE, conservative_weight=conservative_weight, critic_lr=1e-3, **SMALL)
        fit(module, zero_reward_batch, max_steps=100)
        state, embedding, task = bandit.observations(1000)
        q = q_values(module, state, embedding)
        data_action = bandit.expert_action(state, task).unsqueeze(-1)
        unseen = q.scatter(-1, data_action, float("-inf")).max(-1).values
        return float((q.gather(-1, data_action).squeeze(-1) - unseen).mean())

    assert gap_after_training(10.0) > 0.5
    assert abs(gap_after_training(0.0)) < 0.2


def test_discrete_cql_solves_the_bandit():
    assert (
        success_after_training(DiscreteCQL, DISCRETE, max_steps=300) > 0.9
    )  # ignoring the instruction or the state caps it at 0.5


def test_hard_target_update_copies_every_interval():
    module = DiscreteCQL(DISCRETE, target_update_interval=3)
    online, target = module.targets.q_network_params, module.targets.target_q_network_params
    initial = target.clone()
    with torch.no_grad():
        online.apply(lambda p: p.add_(1.0))
    for _ in range(2):
        module.target_updater.step()
        assert_close(target, initial)
    module.target_updater.step()
    assert_close(target, online.data)


class TargetNetworkTD0(TD0Estimator):
    """TorchRL 0.14.1's ``DiscreteCQLLoss`` passes the target parameters as ``params=``, which
    ``TD0Estimator.value_estimate`` ignores (it takes ``target_params=``); this one uses them."""

    def value_estimate(self, tensordict, target_params=None, next_value=None, params=None, **kwargs):
        target_params = params if target_params is None else target_params
        return super().value_estimate(tensordict, target_params=target_params, next_value=next_value, **kwargs)


def q_value_actor(module: DiscreteCQL) -> QValueActor:
    """TorchRL's Q-value actor on a network built as the module's (its weights drawn anew)."""
    head = discrete_head(module.env_spec, "action_value", module.hparams.hidden_sizes)
    return QValueActor(head, spec=action_spec(module.env_spec), action_space="categorical")


def torchrl_reference(module: DiscreteCQL) -> DiscreteCQLLoss:
    """TorchRL's ``DiscreteCQLLoss`` on a Q-value actor with the module's weights, its target moved apart first."""
    move_targets_apart(module.targets.target_q_network_params)
    actor, online = q_value_actor(module), q_value_actor(module)
    online[0][1].module.load_state_dict(module.q_network.state_dict())
    actor[0][1].module.load_state_dict(target_copy(module.targets, "q_network").state_dict())
    loss = DiscreteCQLLoss(actor, action_space="categorical")
    estimator = TargetNetworkTD0(gamma=0.99, value_network=actor)
    estimator.set_keys(value=loss.tensor_keys.value)
    loss.make_value_estimator(estimator)
    loss.value_network_params.data.update_(TensorDict.from_module(online).data)
    return loss


def test_losses_and_gradients_are_torchrls_discrete_cql_loss():
    torch.manual_seed(0)
    module = DiscreteCQL(DISCRETE)
    reference = torchrl_reference(module)
    batch = InstructionBandit(DISCRETE).batch(32)
    batch["next", "terminated"][::2] = False  # the bandit ends every episode: bootstrap half the rows
    ours = module.losses(batch.clone())
    their_batch = batch.clone()
    theirs = reference(their_batch)
    for name in ("loss_qvalue", "loss_cql"):
        torch.testing.assert_close(ours[name].mean(), theirs[name], msg=name)
    torch.testing.assert_close(ours["td_error"], their_batch["td_error"].squeeze(-1))
    (ours["loss_qvalue"].mean() + 10 * ours["loss_cql"].mean()).backward()
    (theirs["loss_qvalue"] + 10 * theirs["loss_cql"]).backward()
    their_gradients = list(reference.value_network_params.grad.flatten_keys(".").values())
    torch.testing.assert_close([p.grad for p in module.q_values.parameters()], their_gradients)
