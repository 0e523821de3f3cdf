import copy

import lightning.pytorch as pl
import pytest
import torch
from tensordict import TensorDict
from tensordict import assert_allclose_td as assert_close

from modules.cql import CQL
from tests.modules.synthetic import CONTINUOUS, DISCRETE, SMALL, InstructionBandit, fit, success_after_training


def q_values(module: CQL, state: torch.Tensor, embedding: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        observation = TensorDict({"state": state, "instruction_embedding": embedding}, batch_size=[len(state)])
        return module.policy(observation)["action_value"]


@pytest.mark.parametrize("terminated, truncated", [(True, False), (False, False), (False, True)])
def test_discrete_td_target_is_r_plus_discounted_max_of_the_target_network(terminated, truncated):
    torch.manual_seed(0)
    module = CQL(DISCRETE, gamma=0.9)
    target_net = copy.deepcopy(module.policy)
    with torch.no_grad():  # the online network moves on; the target must not follow it
        for p in module.policy.parameters():
            p.add_(torch.randn_like(p))
    batch = InstructionBandit(DISCRETE).batch(1)
    batch["next", "reward"].fill_(0.5)
    batch["next", "terminated"].fill_(terminated)
    batch["next", "truncated"].fill_(truncated)
    batch["next", "done"].fill_(terminated or truncated)

    target = module.loss(batch)["target_value"]

    next_q = target_net(batch["next"].clone())["action_value"].max(-1).values.squeeze()
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

        module = CQL(DISCRETE, conservative_weight=conservative_weight, critic_lr=1e-3, **SMALL)
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
        success_after_training(CQL, DISCRETE, max_steps=300) > 0.9
    )  # ignoring the instruction or the state caps it at 0.5


def test_hard_target_update_copies_every_interval():
    module = CQL(DISCRETE, target_update_interval=3)
    online, target = module.loss.value_network_params, module.loss.target_value_network_params
    initial = target.clone()
    with torch.no_grad():
        online.apply(lambda p: p.add_(1.0))
    for _ in range(2):
        module.target_updater.step()
        assert_close(target, initial)
    module.target_updater.step()
    assert_close(target, online.data)


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
