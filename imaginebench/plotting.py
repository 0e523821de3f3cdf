"""Matplotlib without a display: every plot the project writes is a file, on machines that have no screen."""

from __future__ import annotations

from types import ModuleType


def headless_pyplot() -> ModuleType:
    """``matplotlib.pyplot`` on the file-only Agg backend, imported on first use (importing it costs ~0.5 s, which
    a command that draws nothing should not pay)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt
