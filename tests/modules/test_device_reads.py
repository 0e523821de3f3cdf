"""No training update reads a value back from its tensors' device, nor makes a tensor on the host: on a GPU every
such read waits for all queued kernels, so the host cannot run ahead of the device, and a host tensor is a copy or an
error (docs/algorithms.md#speed). Counted on the CPU, where the same ops dispatch."""

from __future__ import annotations

import lightning.pytorch as pl
import pytest
import torch
from torch.utils import _pytree as pytree
from torch.utils._python_dispatch import TorchDispatchMode

from modules.bc import BC
from modules.bcq import BCQ
from modules.combo import COMBO
from modules.cql import CQL
from modules.discrete_bcq import DiscreteBCQ
from modules.discrete_cql import DiscreteCQL
from modules.iql import IQL
from modules.networks import MLPEnsemble
from modules.prdc import PRDC
from modules.td3_bc import TD3BC
from tests.modules.synthetic import CONTINUOUS, DISCRETE, SMALL, InstructionBandit, fit

aten = torch.ops.aten
READS_BACK = {aten._local_scalar_dense, aten.nonzero, aten.masked_select, aten._unique2, aten.unique_consecutive}
"""``.item()``/``bool()`` of a tensor, and ops whose output size depends on the values (a boolean mask's index)."""


class DeviceReads(TorchDispatchMode, pl.Callback):
    """Counts :data:`READS_BACK` ops (and boolean-mask indexing) between the start and end of each update after the first."""

    def __init__(self) -> None:
        super().__init__()
        self.counting = False
        self.found: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if self.counting and (func._overloadpacket in READS_BACK or _boolean_index(func, args)):
            self.found.append(str(func))
        return func(*args, **(kwargs or {}))

    def on_train_batch_start(self, trainer, module, batch, batch_idx) -> None:
        self.counting = batch_idx > 0  # the first update may set things up (Lightning's own first-step checks)

    def on_train_batch_end(self, trainer, module, outputs, batch, batch_idx) -> None:
        self.counting = False


def _boolean_index(func, args) -> bool:
    return func._overloadpacket is aten.index and any(
        isinstance(index, torch.Tensor) and index.dtype == torch.bool for index in args[1]
    )


ALGORITHMS = [
    (BC, DISCRETE),
    (BC, CONTINUOUS),
    (DiscreteCQL, DISCRETE),
    (DiscreteBCQ, DISCRETE),
    (IQL, DISCRETE),
    (IQL, CONTINUOUS),
    (CQL, CONTINUOUS),
    (BCQ, CONTINUOUS),
    (TD3BC, CONTINUOUS),
    (PRDC, CONTINUOUS),
    (COMBO, CONTINUOUS),
]


class DefaultDeviceMeta(TorchDispatchMode, pl.Callback):
    """Updates after the first run with ``meta`` as torch's default device: a tensor made without naming its device
    lands there, and every op given tensors of both devices is recorded (an index tensor on the host is a hidden copy
    on a GPU; most other ops would fail there)."""

    def __init__(self) -> None:
        super().__init__()
        self.default: torch.device | None = None
        self.found: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if self.default is not None:
            tensors = [a for a in pytree.tree_leaves((args, kwargs)) if isinstance(a, torch.Tensor) and a.dim() > 0]
            if len({tensor.device.type for tensor in tensors}) > 1:
                self.found.append(str(func))
        return func(*args, **(kwargs or {}))

    def on_train_batch_start(self, trainer, module, batch, batch_idx) -> None:
        self.default = torch.device("meta") if batch_idx > 0 else None
        if self.default is not None:
            self.default.__enter__()

    def on_train_batch_end(self, trainer, module, outputs, batch, batch_idx) -> None:
        if self.default is not None:
            self.default.__exit__(None, None, None)
            self.default = None


BY_ALGORITHM = pytest.mark.parametrize(
    "algorithm, env_spec", ALGORITHMS, ids=[f"{a.__name__}-{s['action_kind']}" for a, s in ALGORITHMS]
)


@BY_ALGORITHM
@pytest.mark.parametrize("check", [DeviceReads, DefaultDeviceMeta], ids=["reads back", "host tensors"])
def test_an_update_keeps_to_its_device(algorithm, env_spec, check, monkeypatch):
    # COMBO's rollouts split rows by member on a CPU only; check the path a GPU takes.
    monkeypatch.setattr(MLPEnsemble, "one_member_per_row", MLPEnsemble.every_member_per_row)
    pl.seed_everything(0)
    bandit = InstructionBandit(env_spec)
    module = algorithm(env_spec, **SMALL)
    if algorithm is PRDC:
        module.index_dataset(bandit.batch(256))
    found = check()
    with found:
        fit(module, bandit.batch, max_steps=4, callbacks=[found])
    assert found.found == []


def test_the_default_device_check_sees_a_tensor_made_on_the_host():
    made = DefaultDeviceMeta()
    values = torch.ones(3, 2)
    with made:
        made.on_train_batch_start(None, None, None, 1)
        values[torch.arange(2)]
        made.on_train_batch_end(None, None, None, None, 1)
    assert made.found == ["aten.index.Tensor"]


def test_the_count_sees_a_read_and_a_boolean_mask():
    reads = DeviceReads()
    values = torch.arange(4.0)
    with reads:
        reads.counting = True
        bool(values.sum() > 1)
        values[values > 1]
    assert len(reads.found) == 2
