import copy

import lightning.pytorch as pl
import pytest
import torch
from tensordict import TensorDict
from tensordict import assert_allclose_td as assert_close

from modules.discrete_cql import DiscreteCQL
from tests.modules.synthetic import DISCRETE, SMALL, InstructionBandit, fit, success_after_training


def q_values(module: DiscreteCQL, state: torch.Tensor, embedding: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        observation = TensorDict({"state": state, "instruction_embedding": embedding}, batch_size=[len(state)])
        return module.policy(observation)["action_value"]


@pytest.mark.parametrize("terminated, truncated", [(True, False), (False, False), (False, True)])
def test_discrete_td_target_is_r_plus_discounted_max_of_the_target_network(terminated, truncated):
    torch.manual_seed(0)
    module = DiscreteCQL(DISCRETE, gamma=0.9)
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
    online, target = module.loss.value_network_params, module.loss.target_value_network_params
    initial = target.clone()
    with torch.no_grad():
        online.apply(lambda p: p.add_(1.0))
    for _ in range(2):
        module.target_updater.step()
        assert_close(target, initial)
    module.target_updater.step()
    assert_close(target, online.data)
