import torch
from torch import nn

from modules.networks import TwoInputMLP


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
