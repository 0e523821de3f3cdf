"""Initial-state banks, built by our own code (docs/original-benchmark.md#libero used copied ``*_inits.npz`` files):

* ``pick``: the arm at home with an open gripper; the three objects and the basket at random,
  collision-free floor positions (shared by every task that starts from a pick).
* ``place_<object>``: the open gripper around the object, reached by running the expert's
  approach from a pick start.
* ``basket_<object>``: the object lying in the basket with the open hand above it, reached by
  running the expert's pick-and-place from a pick start.

Each row is a :class:`~imaginebench.envs.libero.simulator.Snapshot`. The banks ship as
``assets/Libero-v0/init_banks.npz``, made by ``python -m imaginebench.envs.libero.build_banks``.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from imaginebench.assets import ASSETS_DIR

BANK_FILE = ASSETS_DIR / "Libero-v0" / "init_banks.npz"


@cache
def read_banks() -> dict[str, np.ndarray]:
    if not BANK_FILE.exists():
        raise FileNotFoundError(
            f"Libero-v0: initial-state banks missing at {BANK_FILE}; make them with python -m imaginebench.envs.libero.build_banks"
        )
    with np.load(BANK_FILE) as data:
        return {key: data[key] for key in data.files}


def start_bank(kind: str, obj: str) -> np.ndarray:
    """Snapshot rows of the starts of a task that starts with ``kind`` (pick | place | basket) for ``obj``."""
    return read_banks()["pick" if kind == "pick" else f"{kind}_{obj}"]
