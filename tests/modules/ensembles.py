"""One member of a stacked :class:`modules.networks.MLPEnsemble` as the module it stands for: the
reference the ensemble's tests and the hand-written losses built on it are checked against."""

from __future__ import annotations

import torch

from modules.networks import MLPEnsemble, TwoInputMLP


def member_as_two_input_mlp(ensemble: MLPEnsemble, index: int) -> TwoInputMLP:
    """A :class:`TwoInputMLP` holding a copy of member ``index``'s weights."""
    hidden, x_features = ensemble.x_weight.shape[1:]
    sizes = [hidden, *(weight.shape[-1] for weight in ensemble.weights)]
    member = TwoInputMLP(x_features, ensemble.y_weight.shape[2], sizes[-1], sizes[:-1])
    linears = [module for module in member.body if isinstance(module, torch.nn.Linear)]
    with torch.no_grad():
        member.x_layer.weight.copy_(ensemble.x_weight[index])
        member.x_layer.bias.copy_(ensemble.first_bias[index])
        member.y_layer.weight.copy_(ensemble.y_weight[index])
        for linear, weight, bias in zip(linears, ensemble.weights, ensemble.biases, strict=True):
            linear.weight.copy_(weight[index].T)
            linear.bias.copy_(bias[index, 0])
    return member


def ensemble_gradients(ensemble: MLPEnsemble, index: int) -> list[torch.Tensor]:
    """Member ``index``'s gradients laid out as :func:`member_as_two_input_mlp`'s parameters are."""
    gradients = [ensemble.x_weight.grad[index], ensemble.first_bias.grad[index], ensemble.y_weight.grad[index]]
    for weight, bias in zip(ensemble.weights, ensemble.biases):
        gradients += [weight.grad[index].T, bias.grad[index, 0]]
    return gradients
