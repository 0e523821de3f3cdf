"""One member of a stacked :class:`modules.networks.MLPEnsemble` as the module it stands for: the
reference the ensemble's tests and the hand-written losses built on it are checked against."""

from __future__ import annotations

import copy

import torch
from tensordict import TensorDict
from tensordict.nn import TensorDictModule, TensorDictSequential
from torch import nn
from torchrl.modules import ValueOperator

from modules.networks import ACTION, OBSERVATION, MLPEnsemble, TargetNetworks, TwoInputMLP, mlp, policy_input


def _member_into(ensemble: MLPEnsemble, index: int, network: nn.Module) -> nn.Module:
    """Copies member ``index``'s weights into ``network``'s linear layers, in module order: the first
    layer's ``x`` part (and its ``y`` part if the ensemble takes ``y``), then the others."""
    linears = [module for module in network.modules() if isinstance(module, nn.Linear)]
    pairs = [(ensemble.x_weight[index], ensemble.first_bias[index])]
    if ensemble.y_weight.shape[-1]:
        pairs.append((ensemble.y_weight[index], None))
    pairs += [(weight[index].T, bias[index, 0]) for weight, bias in zip(ensemble.weights, ensemble.biases)]
    with torch.no_grad():
        for linear, (weight, bias) in zip(linears, pairs, strict=True):
            linear.weight.copy_(weight)
            if bias is not None:
                linear.bias.copy_(bias)
    return network


def _layer_sizes(ensemble: MLPEnsemble) -> tuple[int, list[int], int]:
    """``x`` features, hidden sizes and output features of each member."""
    hidden, x_features = ensemble.x_weight.shape[1:]
    sizes = [hidden, *(weight.shape[-1] for weight in ensemble.weights)]
    return x_features, sizes[:-1], sizes[-1]


def member_as_two_input_mlp(ensemble: MLPEnsemble, index: int) -> TwoInputMLP:
    """A :class:`TwoInputMLP` holding a copy of member ``index``'s weights."""
    x_features, hidden_sizes, out_features = _layer_sizes(ensemble)
    network = TwoInputMLP(x_features, ensemble.y_weight.shape[-1], out_features, hidden_sizes)
    return _member_into(ensemble, index, network)


def member_as_mlp(ensemble: MLPEnsemble, index: int) -> nn.Module:
    """An MLP on ``x`` holding a copy of member ``index``'s weights (an ensemble built with ``y_features=0``)."""
    x_features, hidden_sizes, out_features = _layer_sizes(ensemble)
    return _member_into(ensemble, index, mlp(x_features, out_features, hidden_sizes))


def critic_modules_like(ensemble: MLPEnsemble) -> list[TensorDictSequential]:
    """TorchRL-style critics holding copies of the ensemble's members as they are now: ``Q(s, a)`` from
    ``(observation, action)``, or ``Q(s, ·)`` for an ensemble without a second input, at ``state_action_value``."""
    critics = []
    for index in range(ensemble.x_weight.shape[0]):
        if ensemble.y_weight.shape[-1]:
            critic = ValueOperator(member_as_two_input_mlp(ensemble, index), in_keys=[OBSERVATION, ACTION])
        else:
            network = member_as_mlp(ensemble, index)
            critic = TensorDictModule(network, in_keys=[OBSERVATION], out_keys=["state_action_value"])
        critics.append(TensorDictSequential(policy_input(), critic))
    return critics


def ensemble_gradients(ensemble: MLPEnsemble, index: int) -> list[torch.Tensor]:
    """Member ``index``'s gradients in the order of the reference module's parameters."""
    gradients = [ensemble.x_weight.grad[index], ensemble.first_bias.grad[index]]
    if ensemble.y_weight.shape[-1]:
        gradients.append(ensemble.y_weight.grad[index])
    for weight, bias in zip(ensemble.weights, ensemble.biases):
        gradients += [weight.grad[index].T, bias.grad[index, 0]]
    return gradients


def move_targets_apart(*target_parameters) -> None:
    """Adds noise to target weights (not to buffers such as action bounds), so that a loss reading the
    online weights where it should read the targets gives other values."""
    with torch.no_grad():
        for parameters in target_parameters:
            for name, value in parameters.items(True, True):
                if not name[-1].startswith("action_"):
                    value.add_(0.05 * torch.randn_like(value))


def target_copy(targets: TargetNetworks, name: str) -> nn.Module:
    """A copy of network ``name`` holding its target weights, with parameters of its own (inside
    ``targets.target(name)`` the network holds the target weights as plain tensors, not parameters)."""
    network = copy.deepcopy(getattr(targets, name))
    TensorDict.from_module(network).data.update_(getattr(targets, f"target_{name}_params").data)
    return network
