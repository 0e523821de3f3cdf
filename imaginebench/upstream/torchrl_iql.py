"""TorchRL: IQL's target critics run once per batch."""

from __future__ import annotations

from tensordict import TensorDictBase


class TargetQOncePerBatch:
    """Mixin for TorchRL 0.14.1's ``IQLLoss`` and ``DiscreteIQLLoss``: their ``actor_loss`` and
    ``value_loss`` each run the target critics (through the private ``_vmap_qvalue_networkN0``) on
    the batch's ``(s, a)`` with the same parameters. Within one ``forward`` the second run returns
    the first one's result, when its inputs are the very same tensors; the target parameters take
    no gradient, so nothing downstream can tell. Pinned by ``tests/test_upstream.py``."""

    def forward(self, tensordict: TensorDictBase) -> TensorDictBase:
        evaluate = self._vmap_qvalue_networkN0
        cached: list = []  # [input tensors, result] of the last target evaluation

        def target_once(inputs: TensorDictBase, params: TensorDictBase) -> TensorDictBase:
            if params is not self.target_qvalue_network_params:
                return evaluate(inputs, params)
            tensors = list(inputs.values(True, True))
            if cached and len(cached[0]) == len(tensors) and all(a is b for a, b in zip(cached[0], tensors)):
                return cached[1]
            cached[:] = [tensors, evaluate(inputs, params)]
            return cached[1]

        self._vmap_qvalue_networkN0 = target_once
        try:
            return super().forward(tensordict)
        finally:
            self._vmap_qvalue_networkN0 = evaluate
