import pytest
import torch
from torch import nn

from imaginebench.env_spec import EnvSpec
from modules.networks import (
    POLICY_INPUT_KEYS,
    MLPEnsemble,
    TwoInputMLP,
    actor_distribution,
    categorical_actor,
    gaussian_actor,
    observation,
)
from tests.modules.ensembles import ensemble_gradients, member_as_mlp, member_as_two_input_mlp
from tests.modules.synthetic import CONTINUOUS, DISCRETE, InstructionBandit


def test_two_input_mlp_is_initialised_like_one_linear_layer_on_the_concatenation():
    """A separate ``nn.Linear`` on the 4 action features would draw weights up to ±0.5; the joint
    layer of a 475 + 4 input draws them within ±1/√479, for the state and the action alike."""
    torch.manual_seed(0)
    net = TwoInputMLP(475, 4, 1)
    bound = 479**-0.5
    for parameter in (net.x_layer.weight, net.x_layer.bias, net.y_layer.weight):
        assert parameter.abs().max() <= bound
        assert parameter.std() > 0.8 * bound / 3**0.5  # spread as uniform(±bound), not collapsed


def test_two_input_mlp_computes_the_joint_first_layer_with_broadcasting_states():
    torch.manual_seed(0)
    net = TwoInputMLP(6, 2, 3, hidden_sizes=(5, 4))
    joint = nn.Linear(8, 5)
    with torch.no_grad():
        joint.weight.copy_(torch.cat([net.x_layer.weight, net.y_layer.weight], 1))
        joint.bias.copy_(net.x_layer.bias)
    states, actions = torch.randn(7, 6), torch.randn(10, 7, 2)
    expected = net.body(torch.relu(joint(torch.cat([states.expand(10, 7, 6), actions], -1))))
    torch.testing.assert_close(net(states, actions), expected)


ENSEMBLE_SPEC = EnvSpec(state_dim=5, embedding_dim=3, action_kind="continuous", action_dim=2)


@pytest.mark.parametrize("batched_rows", [2048, 0], ids=["all-members-at-once", "member-by-member"])
def test_a_stacked_ensemble_gives_each_members_outputs_and_gradients_with_broadcasting_states(batched_rows):
    torch.manual_seed(0)
    ensemble = MLPEnsemble(3, ENSEMBLE_SPEC, 2, 4, hidden_sizes=(6, 5), batched_rows=batched_rows)
    members = [member_as_two_input_mlp(ensemble, index) for index in range(3)]
    states, actions = torch.randn(7, 8), torch.randn(10, 7, 2)
    outputs = ensemble(states, actions)
    assert outputs.shape == (3, 10, 7, 4)
    expected = torch.stack([member(states, actions) for member in members])
    torch.testing.assert_close(outputs, expected)
    weights = torch.randn_like(outputs)
    (outputs * weights).sum().backward()
    (expected * weights).sum().backward()
    for index, member in enumerate(members):
        for ours, theirs in zip(ensemble_gradients(ensemble, index), member.parameters(), strict=True):
            torch.testing.assert_close(ours, theirs.grad)
    torch.testing.assert_close(ensemble(states, actions, slice(1, 2))[0], members[1](states, actions))
    actions.requires_grad_(True)
    frozen = ensemble(states, actions, slice(1, 2), frozen=True)[0]
    torch.testing.assert_close(frozen, members[1](states, actions))
    before = [p.grad.clone() for p in ensemble.parameters()]
    (frozen * weights[1]).sum().backward()
    expected_action_gradient = torch.autograd.grad((members[1](states, actions) * weights[1]).sum(), actions)[0]
    torch.testing.assert_close(actions.grad, expected_action_gradient)
    assert all(torch.equal(p.grad, old) for p, old in zip(ensemble.parameters(), before))  # the weights get none


def test_a_stacked_ensemble_is_initialised_as_its_member_modules():
    torch.manual_seed(0)
    ensemble = MLPEnsemble(2, EnvSpec(state_dim=91, embedding_dim=384, action_kind="continuous", action_dim=4), 4, 1)
    first_bound, hidden_bound = 479**-0.5, 256**-0.5
    for parameter, bound in [
        (ensemble.x_weight, first_bound),
        (ensemble.y_weight, first_bound),
        (ensemble.first_bias, first_bound),
        *((parameter, hidden_bound) for parameter in [*ensemble.weights, *ensemble.biases]),
    ]:
        assert parameter.abs().max() <= bound
        assert parameter.numel() < 100 or parameter.std() > 0.8 * bound / 3**0.5  # spread as uniform(±bound)
    assert not torch.equal(ensemble.x_weight[0], ensemble.x_weight[1])  # members start apart


def test_a_stacked_ensemble_keeps_its_output_layer_in_float32_under_bfloat16_autocast():
    torch.manual_seed(0)
    ensemble = MLPEnsemble(2, ENSEMBLE_SPEC, 2, 1, hidden_sizes=(6, 5))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        output = ensemble(torch.randn(4, 8), torch.randn(4, 2))
    assert output.dtype == torch.float32


def test_a_stacked_ensemble_without_a_second_input_is_an_mlp_per_member():
    torch.manual_seed(0)
    ensemble = MLPEnsemble(2, ENSEMBLE_SPEC, 0, 3, hidden_sizes=(6, 5))
    states = torch.randn(9, 8)
    expected = torch.stack([member_as_mlp(ensemble, index)(states) for index in range(2)])
    torch.testing.assert_close(ensemble(states), expected)


@pytest.mark.parametrize(
    ("env_spec", "build"),
    [
        (DISCRETE, categorical_actor),
        (CONTINUOUS, gaussian_actor),
        ({**CONTINUOUS, "action_bound": 2.0}, gaussian_actor),
    ],
    ids=["categorical", "gaussian", "gaussian-bound-2"],
)
def test_actor_distribution_on_tensors_is_the_actor_modules_distribution(env_spec, build):
    torch.manual_seed(0)
    spec = EnvSpec(**env_spec)
    actor = build(spec, (32, 32))
    batch = InstructionBandit(env_spec).batch(16)
    action = batch["action"] if spec.is_discrete else batch["action"] * spec.action_bound
    theirs = actor.get_dist(batch.select(*POLICY_INPUT_KEYS)).log_prob(action)
    ours = actor_distribution(actor, spec, observation(batch)).log_prob(action)
    assert ours.shape == theirs.shape == batch.shape
    torch.testing.assert_close(ours, theirs, rtol=1e-6, atol=1e-6)
