"""Success checks on hand-placed states: no simulator needed."""

import numpy as np
import pytest

from imaginebench.envs.metaworld import instruction_texts
from imaginebench.envs.metaworld.composite import BUTTON_TRAVEL
from imaginebench.envs.metaworld.layout import compose_state, entity_row
from imaginebench.envs.metaworld.phrasings import PHRASINGS
from imaginebench.envs.metaworld.tasks import HORIZON, LEVEL_TASKS, TASKS, TCP_OFFSET
from imaginebench.envs.staged import staged_success_flags
from imaginebench.levels import LEVELS

IDENTITY = [1.0, 0.0, 0.0, 0.0]
HAND = np.array([0.0, 0.5, 0.3])


def state(target, hand=HAND, **entities) -> np.ndarray:
    return compose_state(
        np.asarray(hand),
        0.5,
        np.asarray(target, dtype=float),
        {k: entity_row(v, IDENTITY) for k, v in entities.items()},
    )


def solved(task: str, *states) -> bool:
    return bool(staged_success_flags(TASKS[task].stages, np.stack(states))[-1])


def test_levels_hold_the_spec_tasks():
    assert {level: len(LEVEL_TASKS[level]) for level in LEVELS} == {"train": 10, "rephrase": 10, "easy": 8, "hard": 4}
    assert set(LEVEL_TASKS["hard"]) == {"make-coffee", "locked-door-open", "hammer", "soccer"}
    assert all(TASKS[t].horizon >= HORIZON for level in LEVELS for t in LEVEL_TASKS[level])


def test_phrasings_cover_every_task_and_rephrase_is_unseen():
    for level in LEVELS:
        assert set(PHRASINGS[level]) == set(LEVEL_TASKS[level])
    assert not set(instruction_texts("train")) & set(instruction_texts("rephrase"))
    assert len(instruction_texts("train")) >= 100


@pytest.mark.parametrize(
    ("task", "entity", "inside", "outside"),
    [
        ("push", "target_object", [0.04, 0, 0], [0.06, 0, 0]),
        ("pick-place", "target_object", [0, 0.06, 0], [0, 0.08, 0]),
        ("button-press", "button", [0.3, 0.015, 0.3], [0, 0.025, 0]),  # judged along y only
        ("door-unlock", "lock", [0.015, 0.3, 0.3], [0.025, 0, 0]),  # along x only
        ("door-lock", "lock", [0.3, 0.3, 0.015], [0, 0, 0.025]),  # along z only
        ("door-open", "handle", [0.07, 0.3, 0.3], [0.09, 0, 0]),
        ("window-open", "window", [0.04, 0.3, 0.3], [0.06, 0, 0]),
        ("faucet-close", "faucet", [0.06, 0, 0], [0.08, 0, 0]),
        ("soccer", "soccer", [0, 0.06, 0], [0, 0.08, 0]),
    ],
)
def test_single_task_thresholds(task, entity, inside, outside):
    target = np.array([0.0, 0.7, 0.1])
    assert solved(task, state(target, **{entity: target + inside}))
    assert not solved(task, state(target, **{entity: target + outside}))


def test_reach_is_judged_at_the_tool_centre_point():
    target = np.array([0.0, 0.7, 0.1])
    beside = np.array([0.04, 0.0, 0.0])
    assert solved("reach", state(target, hand=target - TCP_OFFSET + beside))
    assert not solved("reach", state(target, hand=target + beside))  # the hand body is 4.5 cm above the fingertips


def test_hammer_needs_the_nail_driven_in():
    goal = np.array([0.24, 0.74, 0.11])
    assert not solved("hammer", state(goal, nail=goal - [0, 0.1, 0]))  # where the nail starts
    assert solved("hammer", state(goal, nail=goal - [0, 0.005, 0]))


def coffee_states():
    mug_goal = np.array([0.0, 0.6, 0.0])
    button_rest = mug_goal + [0, 0, 0.3]
    button_goal = button_rest + [0, BUTTON_TRAVEL, 0]
    mug_away = dict(coffee=mug_goal + [0.2, 0, 0], coffee_button=button_rest)
    mug_placed = dict(coffee=mug_goal, coffee_button=button_rest)
    pressed = dict(coffee=mug_goal, coffee_button=button_goal)
    return mug_goal, button_goal, mug_away, mug_placed, pressed


def test_make_coffee_needs_mug_then_button_in_order():
    mug_goal, button_goal, mug_away, mug_placed, pressed = coffee_states()
    flags = staged_success_flags(
        TASKS["make-coffee"].stages,
        np.stack([state(mug_goal, **mug_away), state(mug_goal, **mug_placed), state(button_goal, **pressed)]),
    )
    assert flags.tolist() == [False, False, True]
    # the button pressed while the mug was never under the spout does not count
    assert not solved(
        "make-coffee",
        state(mug_goal, **mug_away),
        state(button_goal, coffee=mug_goal + [0.2, 0, 0], coffee_button=button_goal),
    )


def test_make_coffee_stage_two_reads_the_button_not_the_mug():
    """Quirk 6 of docs/original-benchmark.md: the original read the mug's position for the button stage."""
    mug_goal, button_goal, _, mug_placed, _ = coffee_states()
    nudged_mug = dict(
        coffee=button_goal - [0, 0, 0.3], coffee_button=mug_placed["coffee_button"]
    )  # mug 3 cm further in, button untouched
    assert not solved("make-coffee", state(mug_goal, **mug_placed), state(button_goal, **nudged_mug))


def test_locked_door_open_needs_the_lock_first():
    unlock_target, open_target = np.array([0.0, 0.68, 0.21]), np.array([-0.1, 0.45, 0.1])
    locked = dict(lock=unlock_target - [0.1, 0, 0], handle=open_target)
    unlocked_closed = dict(lock=unlock_target, handle=open_target + [0.2, 0.2, 0])
    unlocked_open = dict(lock=unlock_target, handle=open_target)
    assert not solved("locked-door-open", state(unlock_target, **locked), state(open_target, **locked))
    flags = staged_success_flags(
        TASKS["locked-door-open"].stages,
        np.stack([state(unlock_target, **unlocked_closed), state(open_target, **unlocked_open)]),
    )
    assert flags.tolist() == [False, True]
