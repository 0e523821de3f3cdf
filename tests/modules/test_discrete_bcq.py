import torch
import torch.nn.functional as F

from modules.discrete_bcq import DiscreteBCQ
from tests.modules.synthetic import DISCRETE, SMALL, InstructionBandit, last_layer, success_after_training


def test_discrete_policy_picks_only_actions_the_imitation_network_supports():
    module = DiscreteBCQ(DISCRETE, action_threshold=0.3, **SMALL)
    with torch.no_grad():
        for network, favourite in ((module.q_network, 0), (module.imitation, 2)):
            layer = last_layer(network)
            layer.weight.zero_()
            layer.bias.zero_()
            layer.bias[favourite] = 5.0  # Q prefers action 0; the data (imitation) shows action 2
    state, embedding, _ = InstructionBandit(DISCRETE).observations(64)
    with torch.no_grad():
        assert (module.act(state, embedding) == 2).all()
        module.policy[-1].module.threshold = 1e-4  # now every action is supported: Q decides
        assert (module.act(state, embedding) == 0).all()


def test_discrete_q_loss_on_terminal_rows_is_the_huber_error_to_the_reward():
    torch.manual_seed(0)
    module = DiscreteBCQ(DISCRETE, **SMALL)
    batch = InstructionBandit(DISCRETE).batch(16)
    batch["next", "reward"].uniform_(-3, 3)
    with torch.no_grad():
        q_taken = module.q_network(torch.cat([batch["state"], batch["instruction_embedding"]], -1)).gather(
            -1, batch["action"].unsqueeze(-1)
        )
        losses = module.losses(batch)
    torch.testing.assert_close(
        losses["loss_qvalue"], F.smooth_l1_loss(q_taken, batch["next", "reward"], reduction="none").squeeze(-1)
    )


def test_discrete_bcq_solves_the_bandit():
    assert (
        success_after_training(DiscreteBCQ, DISCRETE, 600, lr=1e-3) > 0.9
    )  # ignoring the instruction or the state caps it at 0.5
