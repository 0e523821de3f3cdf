"""torch: whether code runs inside a ``torch.func`` transform."""

from __future__ import annotations

import torch


def inside_functorch_transform() -> bool:
    """True inside ``vmap``, ``grad`` and the other ``torch.func`` transforms: torch keeps the test
    private (``torch._C._functorch.maybe_current_level``); pinned by ``tests/test_upstream.py``."""
    return torch._C._functorch.maybe_current_level() is not None
