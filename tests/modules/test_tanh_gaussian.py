"""The squashed Gaussian of the hand-written SAC losses against TorchRL's TanhNormal."""

from __future__ import annotations

import pytest
import torch
from torchrl.modules import TanhNormal

from modules.tanh_gaussian import TanhGaussian


def parameters(seed: int, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """Locations that saturate tanh in a few rows (|loc| up to 12), where a naive inverse would fail."""
    generator = torch.Generator().manual_seed(seed)
    loc = torch.randn(32, 3, generator=generator) * 4
    scale = torch.rand(32, 3, generator=generator) + 0.05
    return loc.to(dtype).requires_grad_(), scale.to(dtype).requires_grad_()


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("bound", [1.0, 2.0])
@pytest.mark.parametrize("sample_shape", [(), (5,)])
def test_samples_log_probabilities_and_gradients_are_tanh_normals(
    dtype: torch.dtype, bound: float, sample_shape: tuple[int, ...]
):
    """The same functions of the same draw: equal to 1e-8 in float64 (TanhNormal keeps a bound as a float32 tensor,
    so its log(bound) is float32's). In float32 the scale's gradient differs by
    up to ~1e-5 of its size: TanhNormal's log-density recomputes ``(x − loc) / scale`` from the draw, and two terms of
    size noise² / scale cancel in its gradient, which the noise's own square does not leave behind."""
    results = []
    for distribution_of in (
        lambda loc, scale: TanhNormal(loc, scale, low=-bound, high=bound),
        lambda loc, scale: TanhGaussian(loc, scale, bound),
    ):
        loc, scale = parameters(0, dtype)
        torch.manual_seed(1)
        action, log_prob = distribution_of(loc, scale).rsample_and_log_prob(sample_shape)
        (action.sin().sum() + log_prob.sum()).backward()
        results.append((action, log_prob, loc.grad, scale.grad))
    theirs, ours = results
    assert ours[0].shape == (*sample_shape, 32, 3) and ours[1].shape == (*sample_shape, 32)
    assert ours[0].abs().max() <= bound and (ours[0].abs() > 0.99 * bound).any()  # some draws saturate
    exact = {"rtol": 1e-12, "atol": 1e-8} if dtype == torch.float64 else {}
    for name, expected, actual in zip(("action", "log_prob", "loc.grad", "scale.grad"), theirs, ours):
        tolerance = {"rtol": 1e-4, "atol": 1e-4} if name == "scale.grad" and dtype == torch.float32 else exact
        torch.testing.assert_close(actual, expected, msg=name, **tolerance)


def test_building_and_sampling_read_nothing_back_from_the_tensors():
    """``bool()`` or ``.item()`` of a tensor dispatches ``aten::_local_scalar_dense``: on a GPU, a wait."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Reads(TorchDispatchMode):
        count = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            Reads.count += func is torch.ops.aten._local_scalar_dense.default
            return func(*args, **(kwargs or {}))

    loc, scale = parameters(0, torch.float32)
    with Reads():
        TanhGaussian(loc, scale, 2.0).rsample_and_log_prob((4,))
    assert Reads.count == 0
    with Reads():
        TanhNormal(loc, scale, low=-2.0, high=2.0).rsample_and_log_prob((4,))
    assert Reads.count > 0  # the reason this module exists; if TorchRL drops its check, so can we
