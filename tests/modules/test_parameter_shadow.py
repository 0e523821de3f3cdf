import pytest
import torch

from modules.bcq import BCQ
from modules.discrete_bcq import DiscreteBCQ
from modules.discrete_cql import DiscreteCQL
from modules.iql import IQL
from modules.networks import deterministic_action
from modules.td3_bc import TD3BC
from tests.modules.ensembles import move_targets_apart, target_copy
from tests.modules.synthetic import CONTINUOUS, DISCRETE, SMALL

WITH_TARGETS = [
    (TD3BC, CONTINUOUS),
    (BCQ, CONTINUOUS),
    (IQL, CONTINUOUS),
    (DiscreteCQL, DISCRETE),
    (DiscreteBCQ, DISCRETE),
]


def target_names(module) -> list[str]:
    return [
        name[len("target_") : -len("_params")]
        for name, _ in module.targets.named_children()
        if name.startswith("target_")
    ]


def held(network: torch.nn.Module, keys) -> list[torch.Tensor]:
    """What the network's forward reads under each key (attribute lookup, as ``forward`` does)."""
    values = []
    for key in keys:
        owner = network
        for part in key:
            owner = getattr(owner, part)
        values.append(owner)
    return values


@pytest.mark.parametrize(("algorithm", "spec"), WITH_TARGETS, ids=lambda value: getattr(value, "__name__", ""))
def test_inside_target_every_weight_read_is_the_target_tensor_and_after_it_the_parameter_again(algorithm, spec):
    torch.manual_seed(0)
    module = algorithm(spec, **SMALL)
    names = target_names(module)
    assert names
    for round_ in range(3):
        if round_ == 1:
            module = module.to(torch.float64)
        for name in names:
            network, targets = getattr(module.targets, name), getattr(module.targets, f"target_{name}_params")
            if round_ == 2:  # new target tensors in place of the old: the shadow must follow
                for key, value in list(targets.items(True, True)):
                    targets[key] = value.clone()
            keys = [(key,) if isinstance(key, str) else key for key in targets.keys(True, True)]
            parameters = held(network, keys)
            with module.targets.target(name):
                assert all(a is b for a, b in zip(held(network, keys), targets.values(True, True), strict=True))
            assert all(a is b for a, b in zip(held(network, keys), parameters, strict=True))
            with pytest.raises(RuntimeError), module.targets.target(name):
                raise RuntimeError("inside")
            assert all(a is b for a, b in zip(held(network, keys), parameters, strict=True))
            with module.targets.target(name):
                with module.targets.target(name):  # nested: the outer pass keeps the targets after the inner one
                    pass
                assert all(a is b for a, b in zip(held(network, keys), targets.values(True, True), strict=True))
            assert all(a is b for a, b in zip(held(network, keys), parameters, strict=True))


def test_a_target_pass_computes_what_a_network_holding_the_target_weights_computes():
    torch.manual_seed(0)
    module = TD3BC(CONTINUOUS, **SMALL)
    move_targets_apart(module.targets.target_actor_params, module.targets.target_critics_params)
    obs = torch.randn(5, module.env_spec.state_dim + module.env_spec.embedding_dim)
    action = torch.randn(5, module.env_spec.action_dim)
    with module.targets.target("critics"):
        target_value = module.critics(obs, action)
    with module.targets.target("actor"):
        target_action = deterministic_action(module.actor, module.env_spec, obs)
    torch.testing.assert_close(target_value, target_copy(module.targets, "critics")(obs, action), rtol=0, atol=0)
    copied_actor = target_copy(module.targets, "actor")
    torch.testing.assert_close(target_action, deterministic_action(copied_actor, module.env_spec, obs), rtol=0, atol=0)
    assert not torch.equal(target_value, module.critics(obs, action))
