import torch
from torchrl.objectives import SoftUpdate

from imaginebench.upstream.torchrl_soft_update import ForeachSoftUpdate
from modules.td3_bc import TD3BC
from tests.modules.synthetic import CONTINUOUS, SMALL


def targets_of(module: TD3BC) -> dict[str, torch.Tensor]:
    return {name: tensor.clone() for name, tensor in module.targets.state_dict().items() if "target_" in name}


def test_foreach_soft_update_moves_the_targets_as_torchrl_does_also_after_the_module_moves():
    torch.manual_seed(0)
    ours, theirs = TD3BC(CONTINUOUS, **SMALL), TD3BC(CONTINUOUS, **SMALL)
    theirs.load_state_dict(ours.state_dict())
    assert isinstance(ours.target_updater, ForeachSoftUpdate)
    reference = SoftUpdate(theirs.targets, tau=ours.hparams.tau)
    for round_ in range(5):
        if round_ == 3:  # new storage for every tensor: the updater must follow
            ours, theirs = ours.to(torch.float64), theirs.to(torch.float64)
        before = targets_of(ours)
        for module in (ours, theirs):
            with torch.no_grad():
                for parameter in module.parameters():
                    parameter.add_(0.5 * (round_ + 1))
        ours.target_updater.step()
        reference.step()
        after = targets_of(ours)
        assert all(not torch.equal(before[name], after[name]) for name in after if name.endswith("weight"))
        torch.testing.assert_close(after, targets_of(theirs), rtol=0, atol=1e-6)
