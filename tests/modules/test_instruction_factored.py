import pytest
import torch
from torch import nn

from modules.instruction_factored import CALLS_WITHOUT_LOOKING, InstructionFactoredLinear
from modules.networks import mlp, observation_dim, observation_mlp

STATE, EMBEDDING, HIDDEN = 5, 12, 16


def layers(seed: int = 0) -> tuple[nn.Linear, InstructionFactoredLinear]:
    """A plain layer and a factored copy of it with its own parameters (so their gradients are separate)."""
    torch.manual_seed(seed)
    plain = nn.Linear(STATE + EMBEDDING, HIDDEN)
    copy = nn.Linear(STATE + EMBEDDING, HIDDEN)
    copy.load_state_dict(plain.state_dict())
    return plain, InstructionFactoredLinear.replacing(copy, EMBEDDING)


def inputs(rows: int, instructions: int, *leading: int) -> torch.Tensor:
    generator = torch.Generator().manual_seed(1)
    table = torch.randn(instructions, EMBEDDING, generator=generator)
    embedding = table[torch.randint(instructions, (*leading, rows), generator=generator)]
    return torch.cat([torch.randn(*leading, rows, STATE, generator=generator), embedding], -1)


def assert_same_function(plain: nn.Linear, factored: InstructionFactoredLinear, x: torch.Tensor) -> None:
    """Outputs, and the parameters' gradients of a random projection of them, agree to float rounding."""
    torch.testing.assert_close(factored(x), plain(x))
    weights = torch.randn(*x.shape[:-1], HIDDEN, generator=torch.Generator().manual_seed(2))
    (plain(x) * weights).sum().backward()
    (factored(x) * weights).sum().backward()
    torch.testing.assert_close(factored.weight.grad, plain.weight.grad)
    torch.testing.assert_close(factored.bias.grad, plain.bias.grad)


@pytest.mark.parametrize("leading", [(), (3,)])
def test_grouped_rows_give_the_plain_layers_outputs_and_gradients(leading):
    plain, factored = layers()
    x = inputs(64, 4, *leading)
    groups = factored._instruction_groups(x[..., STATE:].reshape(-1, EMBEDDING))
    assert groups is not None and groups[0].shape[0] == 4  # the grouped path is the one under test
    assert_same_function(plain, factored, x)


def test_mostly_distinct_or_few_rows_take_the_plain_product():
    _, factored = layers()
    assert factored._instruction_groups(inputs(64, 64)[:, STATE:]) is None
    assert factored._instruction_groups(inputs(8, 1)[:, STATE:]) is None


def test_after_mostly_distinct_rows_the_next_calls_do_not_look_for_groups():
    plain, factored = layers()
    assert factored._instruction_groups(inputs(64, 64)[:, STATE:]) is None
    few = inputs(64, 4)
    for _ in range(CALLS_WITHOUT_LOOKING):
        assert factored._instruction_groups(few[:, STATE:]) is None
    assert factored._instruction_groups(few[:, STATE:]) is not None
    assert_same_function(plain, factored, few)


def test_an_embedding_that_needs_its_gradient_is_not_grouped():
    """A gathered row would pass its whole group's gradient to one representative."""
    plain, factored = layers()
    x = inputs(64, 4).requires_grad_()
    assert factored._instruction_groups(x[:, STATE:]) is None
    torch.testing.assert_close(torch.autograd.grad(factored(x).sum(), x)[0], torch.autograd.grad(plain(x).sum(), x)[0])


def test_rows_whose_keys_collide_are_not_grouped():
    """Exactness never rests on the hash: with a probe that maps every embedding to 0, the check
    against the representatives refuses the grouping."""
    plain, factored = layers()
    factored.probe = torch.zeros(EMBEDDING)
    x = inputs(64, 4)
    assert factored._instruction_groups(x[:, STATE:]) is None
    assert_same_function(plain, factored, x)


def test_autocast_and_vmap_take_the_plain_product():
    _, factored = layers()
    x = inputs(64, 4)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert factored._instruction_groups(x[:, STATE:]) is None
    stacked = torch.stack([factored.weight.detach(), factored.weight.detach() + 1])
    batched = torch.func.vmap(lambda weight: torch.func.functional_call(factored, {"weight": weight}, (x,)))(stacked)
    torch.testing.assert_close(batched[1], factored(x) + x.sum(-1, keepdim=True))


def test_observation_mlp_has_the_plain_mlps_parameters_and_initial_values():
    """Replacing the first layer keeps the state dict (old checkpoints load) and draws nothing from
    the global generator (seeded runs start from the same networks as before)."""
    from imaginebench.env_spec import EnvSpec

    spec = EnvSpec(state_dim=STATE, embedding_dim=EMBEDDING, action_kind="discrete", num_actions=3)
    torch.manual_seed(0)
    plain = mlp(observation_dim(spec), 3)
    after_plain = torch.rand(1)
    torch.manual_seed(0)
    factored = observation_mlp(spec, 3)
    assert isinstance(factored[0], InstructionFactoredLinear)
    assert torch.rand(1) == after_plain
    assert plain.state_dict().keys() == factored.state_dict().keys()
    for key, value in plain.state_dict().items():
        torch.testing.assert_close(factored.state_dict()[key], value, rtol=0, atol=0)
