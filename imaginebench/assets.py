"""Where the files shipped with the repository live: ``assets/`` at the repository root."""

from __future__ import annotations

from pathlib import Path

ASSETS_DIR = Path(__file__).resolve().parents[1] / "assets"
"""Found from this file, not the working directory: the package is installed editable from the
repository, so ``assets/`` sits next to the ``imaginebench`` package wherever a command runs."""


def assets_dir() -> Path:
    """:data:`ASSETS_DIR`, read when called: tests swap in a tiny shipped model with
    ``monkeypatch.setattr("imaginebench.assets.ASSETS_DIR", ...)`` (the imaginary-data lookup and
    :mod:`imaginebench.shipped` read it through here)."""
    return ASSETS_DIR
