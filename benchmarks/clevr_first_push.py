"""Which ball, which way: the first push of CLEVR-Robot's easy rollouts against what the instruction names.

An easy goal ("push the red ball backward") names one ball and one side. The expert's single push moves that ball
straight to that side; a grounded model that reads the sentence should push the same. Per dataset (real or
imagined, in the episode format): the share of rollouts whose first push moves the named ball, the share that
pushes straight to the named side (1 of 8 directions), and both.

    .venv/bin/python benchmarks/clevr_first_push.py DIR [DIR ...]
"""

from __future__ import annotations

import argparse
import re

import numpy as np

from imaginebench.datasets.episodes import load_episodes
from imaginebench.envs.clevr.layout import COLORS, DIRECTIONS, SIDES

STEP_TASK_PREFIX = "step-"


def straight_direction(side: str) -> int:
    """The push direction index that moves a ball straight to ``side``."""
    return next(i for i, direction in enumerate(DIRECTIONS) if np.allclose(direction, SIDES[side]))


def first_push_shares(path: str) -> dict[str, float]:
    dataset = load_episodes(path)
    steps = dataset.steps
    tasks = dataset.metadata["tasks"]
    if not all(task.startswith(STEP_TASK_PREFIX) for task in tasks):
        raise SystemExit(f"clevr_first_push: {path} holds tasks {tasks}, not CLEVR-Robot's easy step-<side> tasks")
    counts = {"ball": 0, "side": 0, "both": 0}
    firsts = np.flatnonzero(steps["step"].numpy() == 0)
    for row in firsts:
        ball, direction = divmod(int(steps["action"][row]), len(DIRECTIONS))
        side = tasks[int(steps["task_id"][row])].removeprefix(STEP_TASK_PREFIX)
        text = dataset.instruction_texts[int(steps["instruction_id"][row])].lower()
        named = [i for i, color in enumerate(COLORS) if re.search(rf"\b{color}\b", text)]  # not "red" in "coloured"
        right_ball = named == [ball]
        right_side = direction == straight_direction(side)
        counts["ball"] += right_ball
        counts["side"] += right_side
        counts["both"] += right_ball and right_side
    return {"rollouts": len(firsts), **{key: 100 * value / len(firsts) for key, value in counts.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("datasets", nargs="+", help="episode directories of Ball-v0's easy level")
    args = parser.parse_args()
    for path in args.datasets:
        shares = first_push_shares(path)
        print(
            f"{path}: {shares['rollouts']} rollouts; the first push moves the named ball {shares['ball']:.1f} %, "
            f"straight to the named side {shares['side']:.1f} %, both {shares['both']:.1f} %",
            flush=True,
        )


if __name__ == "__main__":
    main()
