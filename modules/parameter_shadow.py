"""Running a network with other tensors in place of its parameters (target networks), cheaply."""

from __future__ import annotations

from tensordict import TensorDictBase
from torch import Tensor, nn


class ParameterShadow:
    """``with ParameterShadow(network, tensors): network(x)`` runs ``network`` with ``tensors`` (a TensorDict laid
    out as ``TensorDict.from_module(network)``) in place of its parameters. Each tensor goes into the instance
    ``__dict__`` of the submodule that owns the parameter, where Python's attribute lookup finds it before
    ``nn.Module.__getattr__`` reaches the parameter, and leaves on exit; the parameters themselves, the state
    dict and the optimizer never see it.

    Written by hand because tensordict's ``to_module``, which TorchRL's losses use, walks the modules and
    re-registers every tensor on entry and on exit: 155 µs a step for TD3+BC's target actor and critics, against
    1 µs here (Xeon, 1 thread). The owners are looked up once, and again whenever ``tensors``' first leaf is no
    longer the tensor cached (``module.to(...)`` keeps the tensors and changes their data; setting a new tensor
    into ``tensors`` replaces one)."""

    def __init__(self, network: nn.Module, tensors: TensorDictBase) -> None:
        self.network, self.tensors = network, tensors
        self._shadows: list[tuple[nn.Module, str, Tensor]] = []
        self._first_key: tuple[str, ...] = ()
        self._depth = 0  # a pass nested in another keeps the outer one's tensors in place until the outer ends

    def __enter__(self) -> None:
        self._depth += 1
        if self._depth > 1:
            return
        if not self._shadows or self.tensors.get(self._first_key) is not self._shadows[0][2]:
            self._look_up()
        for owner, name, tensor in self._shadows:
            owner.__dict__[name] = tensor

    def __exit__(self, *exception) -> None:
        self._depth -= 1
        if self._depth == 0:
            for owner, name, _ in self._shadows:
                del owner.__dict__[name]

    def _look_up(self) -> None:
        keys = list(self.tensors.keys(include_nested=True, leaves_only=True))
        self._shadows, self._first_key = [], keys[0]
        for key in keys:
            path = (key,) if isinstance(key, str) else key
            owner = self.network.get_submodule(".".join(path[:-1]))
            self._shadows.append((owner, path[-1], self.tensors.get(key)))
