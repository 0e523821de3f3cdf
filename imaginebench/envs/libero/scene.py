"""The floor scene every Libero-v0 task runs in: our own BDDL problem (docs/original-benchmark.md#libero), written to the
cache on first use because LIBERO reads problems from files.

Alphabet soup, cream cheese and salad dressing stand on the floor in front of the robot with the
basket to its left; reset then replaces this layout with one from our initial-state banks
(:mod:`imaginebench.envs.libero.banks`), so the regions only need to give a collision-free start.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from imaginebench.storage import atomic_write_text

SCENE_BDDL = """\
(define (problem LIBERO_Floor_Manipulation)
  (:domain robosuite)
  (:language Tidy the groceries into the basket)
  (:regions
    (basket_area (:target floor) (:ranges ((-0.01 0.25 0.01 0.27))))
    (soup_area (:target floor) (:ranges ((-0.13 -0.24 -0.11 -0.22))))
    (cheese_area (:target floor) (:ranges ((-0.16 0.04 -0.14 0.06))))
    (dressing_area (:target floor) (:ranges ((0.04 -0.11 0.06 -0.09))))
    (contain_region (:target basket_1))
  )
  (:fixtures floor - floor)
  (:objects
    alphabet_soup_1 - alphabet_soup
    cream_cheese_1 - cream_cheese
    salad_dressing_1 - salad_dressing
    basket_1 - basket
  )
  (:obj_of_interest alphabet_soup_1 cream_cheese_1 salad_dressing_1 basket_1)
  (:init
    (On alphabet_soup_1 floor_soup_area)
    (On cream_cheese_1 floor_cheese_area)
    (On salad_dressing_1 floor_dressing_area)
    (On basket_1 floor_basket_area)
  )
  (:goal (And (In alphabet_soup_1 basket_1_contain_region)))
)
"""


def scene_file() -> Path:
    """Path of the scene's BDDL file (content-addressed, so an edited scene never reads a stale file)."""
    root = Path(os.environ.get("IMAGINEBENCH_CACHE", Path.home() / ".cache" / "imaginebench"))
    digest = hashlib.sha256(SCENE_BDDL.encode()).hexdigest()[:12]
    path = root / "libero" / f"floor_scene_{digest}.bddl"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(SCENE_BDDL, path)
    return path
