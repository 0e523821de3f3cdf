"""Every speed optimisation of the networks leaves each algorithm's losses and gradients as the
straightforward computation gives them, up to float rounding."""

from __future__ import annotations

import pytest
import torch

from modules.bc import BC
from modules.bcq import BCQ
from modules.combo import COMBO
from modules.cql import CQL
from modules.discrete_bcq import DiscreteBCQ
from modules.discrete_cql import DiscreteCQL
from modules.full_precision import FullPrecisionLinear
from modules.instruction_factored import InstructionFactoredLinear
from modules.iql import IQL
from modules.prdc import PRDC
from modules.td3_bc import TD3BC
from tests.modules.synthetic import CONTINUOUS, DISCRETE, SMALL, InstructionBandit

ALGORITHMS = [
    (BC, DISCRETE),
    (DiscreteCQL, DISCRETE),
    (DiscreteBCQ, DISCRETE),
    (IQL, DISCRETE),
    (BC, CONTINUOUS),
    (CQL, CONTINUOUS),
    (BCQ, CONTINUOUS),
    (IQL, CONTINUOUS),
    (TD3BC, CONTINUOUS),
    (PRDC, CONTINUOUS),
    (COMBO, CONTINUOUS),
]


def losses_and_gradients(module, batch) -> tuple[dict[str, torch.Tensor], list[torch.Tensor]]:
    """The module's loss terms on ``batch`` and the gradients of their sum, the same random draws at every call."""
    module.zero_grad()
    torch.manual_seed(1)
    terms = dict(module.losses(batch.clone()).items())
    sum(value.mean() for name, value in terms.items() if name.startswith("loss")).backward()
    gradients = [p.grad.clone() for p in module.parameters() if p.grad is not None]
    return {name: value.detach() for name, value in terms.items()}, gradients


@pytest.mark.parametrize(
    "algorithm, spec", ALGORITHMS, ids=[f"{algorithm.__name__}-{spec['action_kind']}" for algorithm, spec in ALGORITHMS]
)
def test_grouped_instruction_layers_leave_losses_and_gradients_unchanged(algorithm, spec, monkeypatch):
    torch.manual_seed(0)
    bandit = InstructionBandit(spec)
    batch = bandit.batch(64)  # 4 distinct instructions in 64 rows: every first layer groups
    module = algorithm(spec, **SMALL)
    if isinstance(module, PRDC):
        module.index_dataset(bandit.batch(256))
    grouped_calls = []
    original = InstructionFactoredLinear._instruction_groups

    def spy(layer, embedding):
        groups = original(layer, embedding)
        grouped_calls.append(groups is not None)
        return groups

    monkeypatch.setattr(InstructionFactoredLinear, "_instruction_groups", spy)
    with monkeypatch.context() as plain:
        plain.setattr(InstructionFactoredLinear, "deduplicate", False)
        plain_terms, plain_gradients = losses_and_gradients(module, batch)
    assert not any(grouped_calls)
    grouped_terms, grouped_gradients = losses_and_gradients(module, batch)
    assert any(grouped_calls)
    assert grouped_terms.keys() == plain_terms.keys()
    for name in plain_terms:
        torch.testing.assert_close(grouped_terms[name], plain_terms[name], rtol=1e-4, atol=1e-5, msg=name)
    assert len(grouped_gradients) == len(plain_gradients) > 0
    for grouped, plain in zip(grouped_gradients, plain_gradients):
        torch.testing.assert_close(grouped, plain, rtol=1e-4, atol=1e-5)


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
    from modules.base import OfflineRLModule
    from tests.modules.synthetic import fit

    seen = []
    backward = OfflineRLModule.manual_backward

    def recording(module, loss, *args, **kwargs):
        seen.append((torch.is_autocast_enabled("cpu"), loss.dtype))
        return backward(module, loss, *args, **kwargs)

    monkeypatch.setattr(OfflineRLModule, "manual_backward", recording)
    bandit = InstructionBandit(CONTINUOUS)
    fit(TD3BC(CONTINUOUS, **SMALL), lambda: bandit.batch(32), max_steps=2, precision="bf16-mixed")
    assert seen == [(False, torch.float32)] * 2
