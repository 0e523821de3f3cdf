"""TorchRL: the TD(0) target of ``DiscreteCQLLoss`` from the target network."""

from __future__ import annotations

from torchrl.objectives.value import TD0Estimator


class TargetNetworkTD0(TD0Estimator):
    """``r + γ (1 − terminated) max_a Q_target(s', a)``, from the target network.

    TorchRL 0.14.1's ``DiscreteCQLLoss`` passes the target parameters as ``params=``, which
    ``TD0Estimator.value_estimate`` silently ignores (it takes ``target_params=``), so its own
    estimator bootstraps from the online network; this one uses them.
    """

    def value_estimate(self, tensordict, target_params=None, next_value=None, params=None, **kwargs):
        target_params = params if target_params is None else target_params
        return super().value_estimate(tensordict, target_params=target_params, next_value=next_value, **kwargs)
