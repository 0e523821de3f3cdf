"""bfloat16 training keeps what needs float32 in float32."""

from __future__ import annotations

import pytest
import torch

from modules.base import OfflineRLModule
from modules.full_precision import FLOAT32_ROWS, FullPrecisionLinear, float32_output
from modules.networks import deterministic_action, observation, observations
from modules.td3_bc import TD3BC
from tests.modules.synthetic import CONTINUOUS, SMALL, InstructionBandit, fit


def test_full_precision_output_layer_computes_in_float32_under_bfloat16_autocast():
    """Q-values of a few hundred would round to ±1 or worse in bfloat16."""
    torch.manual_seed(0)
    layer = FullPrecisionLinear.replacing(torch.nn.Linear(8, 3))
    hidden = torch.randn(5, 8).to(torch.bfloat16)  # what an autocast hidden layer hands on
    with torch.autocast("cpu", dtype=torch.bfloat16):
        output = layer(hidden)
        rounded = torch.nn.functional.linear(hidden, layer.weight, layer.bias)
    assert output.dtype == torch.float32 and rounded.dtype == torch.bfloat16
    torch.testing.assert_close(output, torch.nn.functional.linear(hidden.float(), layer.weight, layer.bias))
    assert not torch.equal(output, rounded.float())


def test_under_bf16_mixed_the_backward_pass_runs_outside_autocast(monkeypatch):
    """Inside autocast, the float32 output layers' gradients were recomputed in bfloat16 (a cast of every
    large activation down and back); outside, each product's gradient keeps its forward's dtype."""
    seen = []
    backward = OfflineRLModule.manual_backward

    def recording(module, loss, *args, **kwargs):
        seen.append((torch.is_autocast_enabled("cpu"), loss.dtype))
        return backward(module, loss, *args, **kwargs)

    monkeypatch.setattr(OfflineRLModule, "manual_backward", recording)
    bandit = InstructionBandit(CONTINUOUS)
    fit(TD3BC(CONTINUOUS, **SMALL), lambda: bandit.batch(32), max_steps=2, precision="bf16-mixed")
    assert seen == [(False, torch.float32)] * 2


def test_under_autocast_the_observation_comes_cast_and_the_networks_compute_the_same():
    """Casting once per batch in ``observation`` replaces the first layer's cast in every network pass."""
    torch.manual_seed(0)
    module, batch = TD3BC(CONTINUOUS, **SMALL), InstructionBandit(CONTINUOUS).batch(16)
    plain = torch.cat([batch["state"], batch["instruction_embedding"]], -1)
    assert observation(batch).dtype == torch.float32 and torch.equal(observation(batch), plain)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        obs = observation(batch, ("next",))
        assert obs.dtype == torch.bfloat16
        plain = torch.cat([batch["next", "state"], batch["next", "instruction_embedding"]], -1)
        assert torch.equal(module.critics(obs, batch["action"]), module.critics(plain, batch["action"]))
        assert torch.equal(
            deterministic_action(module.actor, module.env_spec, obs),
            deterministic_action(module.actor, module.env_spec, plain),
        )


@pytest.mark.parametrize("autocast", [False, True])
@pytest.mark.parametrize("shared", [False, True])
def test_observations_are_both_observations_of_the_batch_cast_as_a_whole_would_be(autocast, shared):
    """Casting the parts before joining them, and an embedding tensor both parts hold (as the datamodule's
    batches do) once, changes no value."""
    batch = InstructionBandit(CONTINUOUS).batch(16)
    embedding = batch["instruction_embedding"]
    batch["next", "instruction_embedding"] = embedding if shared else embedding + 1
    expected = [
        torch.cat([batch[(*prefix, "state")], batch[(*prefix, "instruction_embedding")]], -1)
        for prefix in ((), ("next",))
    ]
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
        pair, single = observations(batch), (observation(batch), observation(batch, ("next",)))
    dtype = torch.bfloat16 if autocast else torch.float32
    for ours, one, theirs in zip(pair, single, expected, strict=True):
        assert ours.dtype == one.dtype == dtype
        assert torch.equal(ours, theirs.to(dtype)) and torch.equal(one, theirs.to(dtype))


@pytest.mark.parametrize("shape", [(2 * FLOAT32_ROWS + 5, 16), (3, 40, 16)])
@pytest.mark.parametrize("outputs", [1, 3])
def test_float32_output_computes_in_float32_and_its_gradients_in_the_hidden_dtype(shape, outputs):
    """The ensembles' output layer: the value exact in float32 (not rounded to bfloat16), the gradients those of
    the float32 product to bfloat16 precision, the gradient to ``hidden`` in bfloat16 as autocast would give it."""
    generator = torch.Generator().manual_seed(0)
    members = shape[:-2]
    hidden = torch.randn(shape, generator=generator).to(torch.bfloat16).requires_grad_()
    weight = torch.randn(*members, shape[-1], outputs, generator=generator).requires_grad_()
    bias = torch.randn(*members, 1, outputs, generator=generator).requires_grad_()
    upstream = torch.randn(*shape[:-1], outputs, generator=generator)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        output = float32_output(hidden, weight, bias)
    gradients = torch.autograd.grad(output, (hidden, weight, bias), upstream)
    full = hidden.detach().float().requires_grad_()
    reference = torch.matmul(full, weight) + bias
    expected = torch.autograd.grad(reference, (full, weight, bias), upstream)
    assert output.dtype == torch.float32 and gradients[0].dtype == torch.bfloat16
    torch.testing.assert_close(output, reference, rtol=1e-5, atol=1e-5)
    assert not torch.equal(output, output.to(torch.bfloat16).float())
    for ours, theirs in zip(gradients, expected):
        torch.testing.assert_close(ours.float(), theirs, rtol=2e-2, atol=2e-2 * theirs.abs().max().item())
    assert torch.equal(gradients[2], expected[2])  # the bias's gradient is a float32 sum
