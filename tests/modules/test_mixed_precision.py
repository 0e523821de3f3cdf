"""bfloat16 training keeps what needs float32 in float32."""

from __future__ import annotations

import torch

from modules.base import OfflineRLModule
from modules.full_precision import FullPrecisionLinear
from modules.networks import deterministic_action, observation
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
