"""CQL's continuous critics run under TorchRL's vmap (faster here than its loop over critics,
docs/algorithms.md#speed); the networks must give under vmap what they give called one by one."""

from __future__ import annotations

import pytest
import torch

from modules.cql import CQL
from tests.modules.synthetic import CONTINUOUS, SMALL, InstructionBandit


def losses_and_gradients(module, batch) -> tuple[dict[str, torch.Tensor], list[torch.Tensor]]:
    """The module's loss terms on ``batch`` and the gradients of their sum, the same random draws at every call."""
    module.zero_grad()
    torch.manual_seed(1)
    terms = dict(module.losses(batch.clone()).items())
    sum(value.mean() for name, value in terms.items() if name.startswith("loss")).backward()
    gradients = [p.grad.clone() for p in module.parameters() if p.grad is not None]
    return {name: value.detach() for name, value in terms.items()}, gradients


@pytest.mark.parametrize("algorithm", [CQL], ids=lambda algorithm: algorithm.__name__)
def test_critics_under_vmap_give_the_losses_and_gradients_of_a_loop(algorithm):
    torch.manual_seed(0)
    module = algorithm(CONTINUOUS, **SMALL)
    batch = InstructionBandit(CONTINUOUS).batch(64)
    assert not module.loss.deactivate_vmap
    vmapped_terms, vmapped_gradients = losses_and_gradients(module, batch)
    critic_calls = {name: call for name, call in vars(module.loss).items() if name.startswith("_vmap_qvalue")}
    module.loss.deactivate_vmap = True
    module.loss._make_vmap()  # TorchRL builds its critic calls from the flag once, at construction
    assert critic_calls and all(getattr(module.loss, name) is not call for name, call in critic_calls.items())
    looped_terms, looped_gradients = losses_and_gradients(module, batch)
    assert vmapped_terms.keys() == looped_terms.keys()
    for name in looped_terms:
        torch.testing.assert_close(vmapped_terms[name], looped_terms[name], rtol=1e-4, atol=1e-5, msg=name)
    assert len(vmapped_gradients) == len(looped_gradients) > 0
    for vmapped, looped in zip(vmapped_gradients, looped_gradients):
        torch.testing.assert_close(vmapped, looped, rtol=1e-4, atol=1e-5)
