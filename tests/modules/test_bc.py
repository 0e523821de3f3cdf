import copy
import warnings
from functools import partial

import pytest
import torch
from torchrl.objectives import BCLoss

from modules.bc import BC, penalized_cross_entropy
from tests.modules.synthetic import CONTINUOUS, DISCRETE, InstructionBandit, success_after_training


def test_discrete_bc_learns_an_action_that_depends_on_instruction_and_state():
    assert (
        success_after_training(BC, DISCRETE, max_steps=200) > 0.95
    )  # ignoring the instruction or the state caps it at 0.5


def test_continuous_bc_learns_a_state_and_instruction_dependent_action():
    assert success_after_training(BC, CONTINUOUS, max_steps=200) > 0.9  # ignoring the instruction's sign gives ≤ 0


@pytest.mark.parametrize("env_spec", [DISCRETE, CONTINUOUS], ids=["discrete", "continuous"])
def test_loss_and_gradients_are_torchrls_bc_loss(env_spec):
    """Ours reads the network on tensors; TorchRL's BCLoss runs the actor's TensorDict modules."""
    torch.manual_seed(0)
    module = BC(env_spec)
    batch = InstructionBandit(env_spec).batch(32)
    loss_function = partial(penalized_cross_entropy, logit_penalty=0.5) if module.env_spec.is_discrete else "mse"
    with warnings.catch_warnings():  # TorchRL 0.14.1's BCLoss misses an annotation for its unused target params
        warnings.filterwarnings("ignore", message="The name target_actor_network_params")
        reference = BCLoss(copy.deepcopy(module.actor), loss_function=loss_function, reduction="none")
    ours = module.losses(batch.clone())["loss_bc"]
    theirs = reference(batch.clone())["loss_bc"]
    torch.testing.assert_close(ours, theirs.reshape(32, -1).mean(-1))
    ours.mean().backward()
    theirs.mean().backward()
    their_gradients = list(reference.actor_network_params.grad.flatten_keys(".").values())
    torch.testing.assert_close(
        [p.grad for p in module.actor.parameters()], [g for g in their_gradients if g is not None]
    )


def test_the_log_probability_penalty_is_d3rlpys_discrete_bc_loss():
    """d3rlpy 2.8.1's DiscreteBC: nll of log_softmax plus beta · mean(Categorical.logits²), torch's
    Categorical normalising its logits to log-probabilities; the default squares the raw logits instead."""
    torch.manual_seed(0)
    logits, action = torch.randn(16, 7) * 3 + 2, torch.randint(7, (16,))
    log_probs = torch.distributions.Categorical(logits=logits).logits
    d3rlpy = torch.nn.functional.nll_loss(log_probs, action, reduction="none") + 0.5 * log_probs.pow(2).mean(-1)
    torch.testing.assert_close(penalized_cross_entropy(logits, action, 0.5, "log_probabilities"), d3rlpy)
    assert not torch.allclose(penalized_cross_entropy(logits, action, 0.5), d3rlpy)


def test_bc_squares_what_logit_penalty_on_names():
    torch.manual_seed(0)
    batch = InstructionBandit(DISCRETE).batch(32)
    for penalty_on in ("logits", "log_probabilities"):
        module = BC(DISCRETE, logit_penalty_on=penalty_on)
        logits = module.actor(batch.clone())["action"]
        expected = penalized_cross_entropy(logits, batch["action"], 0.5, penalty_on)
        torch.testing.assert_close(module.losses(batch.clone())["loss_bc"], expected)
