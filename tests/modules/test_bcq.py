import torch

from modules.bcq import BCQ, Perturbation
from tests.modules.synthetic import CONTINUOUS, InstructionBandit, last_layer, success_after_training


def test_perturbation_moves_an_action_by_at_most_the_flexibility():
    from imaginebench.env_spec import EnvSpec

    spec = EnvSpec(**{**CONTINUOUS, "action_bound": 2.0})
    perturbation = Perturbation(spec, flexibility=0.05, hidden_sizes=(16,), activation="relu")
    with torch.no_grad():
        last_layer(perturbation).bias.fill_(100.0)  # saturate the tanh
        obs, action = torch.randn(32, spec.state_dim + spec.embedding_dim), torch.rand(32, spec.action_dim) - 0.5
        shift = perturbation(obs, action) - action
    torch.testing.assert_close(shift, torch.full_like(shift, 0.05 * 2.0))


def test_continuous_bcq_acts_like_the_data_it_was_given():
    assert (
        success_after_training(BCQ, CONTINUOUS, 300, num_candidates=10) > 0.9
    )  # ignoring the instruction's sign gives ≤ 0


def test_the_actor_loss_reaches_the_perturbation_network_only():
    """Q₁ of the perturbed actions is maximised by moving the perturbation, never the critics."""
    torch.manual_seed(0)
    module = BCQ(CONTINUOUS, hidden_sizes=(16, 16))
    module.losses(InstructionBandit(CONTINUOUS).batch(8))["loss_actor"].mean().backward()
    assert all(p.grad is None for p in module.critics.parameters())
    assert all(p.grad is not None for p in module.perturbation.parameters())
