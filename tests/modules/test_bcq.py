import lightning.pytorch as pl
import torch
import torch.nn.functional as F

from modules.bcq import BCQ, Perturbation
from tests.modules.synthetic import CONTINUOUS, DISCRETE, SMALL, InstructionBandit, fit


def last_layer(network: torch.nn.Module) -> torch.nn.Linear:
    return [layer for layer in network.modules() if isinstance(layer, torch.nn.Linear)][-1]


def test_discrete_policy_picks_only_actions_the_imitation_network_supports():
    module = BCQ(DISCRETE, action_threshold=0.3, **SMALL)
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
    module = BCQ(DISCRETE, **SMALL)
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


def test_perturbation_moves_an_action_by_at_most_the_flexibility():
    from imaginebench.env_spec import EnvSpec

    spec = EnvSpec(**{**CONTINUOUS, "action_bound": 2.0})
    perturbation = Perturbation(spec, flexibility=0.05, hidden_sizes=(16,), activation="relu")
    with torch.no_grad():
        last_layer(perturbation).bias.fill_(100.0)  # saturate the tanh
        obs, action = torch.randn(32, spec.state_dim + spec.embedding_dim), torch.rand(32, spec.action_dim) - 0.5
        shift = perturbation(obs, action) - action
    torch.testing.assert_close(shift, torch.full_like(shift, 0.05 * 2.0))


def success(env_spec: dict, steps: int, **kwargs) -> float:
    pl.seed_everything(0)
    bandit = InstructionBandit(env_spec)
    module = fit(BCQ(env_spec, **SMALL, **kwargs), bandit.batch, max_steps=steps).lightning_module
    return bandit.success_rate(module)


def test_discrete_bcq_solves_the_bandit():
    assert success(DISCRETE, 600, lr=1e-3) > 0.9  # ignoring the instruction or the state caps it at 0.5


def test_continuous_bcq_acts_like_the_data_it_was_given():
    assert success(CONTINUOUS, 300, num_candidates=10) > 0.9  # ignoring the instruction's sign gives ≤ 0
