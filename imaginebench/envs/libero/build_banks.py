"""Build the Libero-v0 initial-state banks (:mod:`imaginebench.envs.libero.banks`):
``python -m imaginebench.envs.libero.build_banks``. Apart from the env, so that loading a bank never
imports the expert and the env that run here."""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np

from imaginebench.envs.libero.banks import BANK_FILE, read_banks
from imaginebench.envs.libero.expert import CLOSE, HOVER, OPEN, LiberoExpert, gap, grasp_point
from imaginebench.envs.libero.layout import EEF, OBJECT_AREA, OBJECTS, SHORT, hand_fits
from imaginebench.registry import make

BASKET_AREA = ((-0.06, 0.06), (0.22, 0.28))
OBJECT_GAP = 0.12
"""Smallest xy distance between two objects' centres."""
BASKET_GAP = 0.26
"""Smallest xy distance between an object and the basket's centre (outside it, with room to grasp)."""
SETTLE_STEPS = 10
OPEN_GRIPPER = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0])
RAISE = np.array([0.0, 0.0, 1.0, 0.0, 0.0, 0.0, -1.0])
RELEASED_GAP = 0.07
"""Finger gap beyond which a released object is clear of the opening fingers (fully open: 0.078):
the hand waits for it before it rises."""


def apart(a: np.ndarray, b: np.ndarray) -> bool:
    """Two objects' xy far enough apart to grasp either with the other standing. Without room for the
    hand, lowered to the cheese it knocked over the dressing standing 3 cm off in x and 12 cm in y (the
    one start that failed sequential cheese-and-dressing and all-three) and rested on a can beside it."""
    return bool(np.linalg.norm(a - b) >= OBJECT_GAP and hand_fits(a, b))


def sample_layout(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """xy of the basket and of every object, by rejection sampling."""
    basket = np.array([rng.uniform(*BASKET_AREA[0]), rng.uniform(*BASKET_AREA[1])])
    while True:
        points = [np.array([rng.uniform(*OBJECT_AREA[0]), rng.uniform(*OBJECT_AREA[1])]) for _ in OBJECTS]
        spread = all(apart(a, b) for i, a in enumerate(points) for b in points[i + 1 :])
        if spread and all(np.linalg.norm(p - basket) >= BASKET_GAP for p in points):
            return {"basket": basket, **dict(zip(OBJECTS, points))}


def pick_bank(size: int, seed: int) -> np.ndarray:
    """``size`` settled pick starts as snapshot rows."""
    from imaginebench.envs.libero.simulator import floor_scene

    scene = floor_scene()
    home = scene.snapshot()
    home.gripper_action = np.array([1.0, -1.0])  # fully open (the command an open action ramps to)
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(size):
        scene.restore(home, owner=None)
        for name, xy in sample_layout(rng).items():
            start, _end = scene.sim.model.get_joint_qpos_addr(scene.free_joint(name))
            scene.sim.data.qpos[start : start + 2] = xy
        scene.sim.data.qvel[:] = 0.0
        scene.sim.forward()
        for _ in range(SETTLE_STEPS):
            scene.step(OPEN_GRIPPER)
        rows.append(scene.snapshot().to_row())
    return np.stack(rows)


def expert_bank(kind: str, obj: str, size: int, seed: int) -> np.ndarray:
    """Starts reached by the expert from pick starts: ``place`` (gripper open around ``obj``) or
    ``basket`` (``obj`` released in the basket, arm raised). Failed attempts are skipped."""
    task = f"{'pick' if kind == 'place' else 'pick-and-place'}-{SHORT[obj]}"
    env = make("Libero-v0", level="train" if kind == "place" else "easy", task=task)
    rows, attempt = [], 0
    while len(rows) < size:
        if attempt >= 3 * size:
            raise RuntimeError(
                f"Libero-v0 banks: the expert reached only {len(rows)} {kind} starts for {obj} in {attempt} tries"
            )
        env.reset(seed=seed * 100_000 + attempt)
        attempt += 1
        if _run_to_start(env, LiberoExpert(), kind):
            rows.append(env.scene.snapshot().to_row())
    return np.stack(rows)


def _run_to_start(env, expert, kind: str) -> bool:
    """Step the expert until the start of ``kind`` is reached: place, at the grasp point just before
    the fingers close (the expert's first closing command); basket, once the task is solved and the
    expert lets go, the fingers opened fully and the hand raised straight up to the hover height."""
    solved, released, obj = False, False, env.spec_task.start_object
    for _ in range(env.horizon):
        state, action = env.state(), expert(env)
        if kind == "place" and action[-1] == CLOSE:
            return True  # before the action: the fingers have not started to close
        released = released or (kind == "basket" and solved and action[-1] == OPEN)
        if released:
            if state[EEF][2] > grasp_point(state, obj)[2] + HOVER:
                return True
            action = RAISE if gap(state) > RELEASED_GAP else OPEN_GRIPPER
        _, _, terminated, _, _ = env.step(action)
        solved = solved or terminated
    return False


def main() -> None:
    parser = argparse.ArgumentParser(description="Build the Libero-v0 initial-state banks")
    parser.add_argument("--pick", type=int, default=64, help="pick starts (shared by all objects)")
    parser.add_argument("--per-object", type=int, default=24, help="place and basket starts per object")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    begin = time.perf_counter()
    banks = {"pick": pick_bank(args.pick, args.seed)}
    _write(banks)  # the expert banks start from pick starts read from the file
    for kind in ("place", "basket"):
        for obj in OBJECTS:
            banks[f"{kind}_{obj}"] = expert_bank(kind, obj, args.per_object, args.seed + 1)
            print(
                f"{kind}_{obj}: {len(banks[f'{kind}_{obj}'])} starts ({time.perf_counter() - begin:.0f} s)", flush=True
            )
    _write(banks)
    print(f"wrote {BANK_FILE} in {time.perf_counter() - begin:.0f} s")


def _write(banks: dict[str, np.ndarray]) -> None:
    BANK_FILE.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=BANK_FILE.parent, suffix=".npz")
    with os.fdopen(fd, "wb") as handle:
        np.savez_compressed(handle, **banks)
    os.chmod(tmp, 0o644)
    os.replace(tmp, BANK_FILE)
    read_banks.cache_clear()


if __name__ == "__main__":
    main()
