"""π(·|s) = ``bound · tanh(N(loc, scale))``, the squashed Gaussian of SAC (Haarnoja et al. 2018, appendix C), for the
losses written on tensors (CQL, COMBO): sampled and scored without reading a value back from the device.

Written by hand because TorchRL 0.14.1's ``TanhNormal`` checks its bounds each time it is built (``(high != 1).any()``,
then ``bool()`` of it): one or two reads of a device tensor per distribution, four to six per CQL or COMBO update,
each of which on a GPU waits for every queued kernel. The draw is ``torch.distributions.Normal``'s and the squashing
TorchRL's safe tanh, so :meth:`TanhGaussian.rsample_and_log_prob` gives ``TanhNormal.rsample_and_log_prob``'s actions,
log-probabilities and gradients (``tests/modules/test_tanh_gaussian.py`` compares them, bounds 1 and 2).
"""

from __future__ import annotations

import math
from typing import NamedTuple

from torch import Tensor
from torch.distributions import Normal
from torch.nn import functional
from torchrl.modules.distributions.utils import safetanh_noeps


class TanhGaussian(NamedTuple):
    """A diagonal Gaussian over the last dimension of ``loc``, squashed into ``[-bound, bound]``."""

    loc: Tensor
    scale: Tensor
    bound: float

    def rsample_and_log_prob(self, sample_shape: tuple[int, ...] = ()) -> tuple[Tensor, Tensor]:
        """Reparameterised actions (``sample_shape + loc.shape``) and their log-densities (without the last
        dimension), scored on the Gaussian draw itself: a saturated action would not invert through tanh."""
        gaussian = Normal(self.loc, self.scale, validate_args=False)
        preimage = gaussian.rsample(sample_shape)
        action = safetanh_noeps(preimage)
        # log |d tanh(x) / dx| in the stable form torch's TanhTransform uses.
        log_jacobian = 2.0 * (math.log(2.0) - preimage - functional.softplus(-2.0 * preimage))
        log_prob = (gaussian.log_prob(preimage) - log_jacobian).sum(-1)
        if self.bound != 1.0:
            action = action * self.bound
            log_prob = log_prob - self.loc.shape[-1] * math.log(self.bound)
        return action, log_prob
