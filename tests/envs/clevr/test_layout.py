import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from imaginebench.envs.clevr.layout import (
    BALL_RADIUS,
    CENTER_HIGH,
    CENTER_LOW,
    NUM_ACTIONS,
    STATE_DIM,
    STATE_FIELDS,
    action_of,
    positions_of,
    push_of,
    state_of,
    state_violations,
)
from imaginebench.envs.clevr.tasks import START_GAP, sample_layout

LAYOUT = np.array([[-0.4, 0.0], [-0.1, 0.0], [0.2, 0.3], [0.4, 0.5], [0.0, 0.5]])


def test_actions_are_ball_times_eight_plus_direction():
    assert NUM_ACTIONS == 40
    ball, direction = push_of(19)  # green (2), direction 3 = (0, -1) = toward the front
    assert ball == 2 and direction.tolist() == [0, -1]
    assert push_of(action_of(4, 7))[1].tolist() == [-0.8, -0.8]
    assert [push_of(a)[0] for a in range(NUM_ACTIONS)] == [a // 8 for a in range(NUM_ACTIONS)]
    with pytest.raises(ValueError, match="0..39"):
        push_of(40)


def test_state_is_xy_of_the_balls_in_colour_order():
    assert STATE_DIM == 10
    assert STATE_FIELDS[:4] == ("red_x", "red_y", "blue_x", "blue_y") and STATE_FIELDS[-1] == "cyan_y"
    state = state_of(LAYOUT)
    assert state.dtype == np.float32 and state[4:6].tolist() == pytest.approx([0.2, 0.3])
    np.testing.assert_allclose(positions_of(state), LAYOUT, atol=1e-6)


def test_a_layout_inside_the_walls_without_overlap_is_legal():
    assert state_violations(state_of(LAYOUT)) == []


@pytest.mark.parametrize(
    "ball, position, reason",
    [
        (0, (CENTER_LOW[0] - 0.05, 0.0), "red ball .* not inside the walls"),
        (3, (0.4, CENTER_HIGH[1] + 0.05), "purple ball .* not inside the walls"),
        (1, (-0.4 + 1.5 * BALL_RADIUS, 0.0), "red and blue balls overlap"),
    ],
)
def test_balls_outside_the_walls_or_overlapping_are_illegal(ball, position, reason):
    layout = LAYOUT.copy()
    layout[ball] = position
    reasons = state_violations(state_of(layout))
    assert len(reasons) == 1
    assert re.search(reason, reasons[0])


def test_malformed_states_are_illegal():
    assert state_violations(np.zeros(9)) == ["state has shape (9,), expected (10,)"]
    bad = state_of(LAYOUT)
    bad[3] = np.nan
    assert state_violations(bad) == ["state has non-finite numbers"]


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_sampled_layouts_are_legal_and_spaced(seed):
    layout = sample_layout(np.random.default_rng(seed))
    assert state_violations(state_of(layout)) == []
    gaps = np.linalg.norm(layout[:, None] - layout[None], axis=-1) + np.eye(5) * 9
    assert gaps.min() >= 2 * BALL_RADIUS + START_GAP - 1e-9


TOLERANCE = 0.02  # Ball-v0's state_tolerance


@pytest.mark.parametrize(
    "position, legal_within_tolerance",
    [
        ((-0.4 + 2 * BALL_RADIUS - 0.04, 0.0), True),  # 0.04 into red along x: both may part by 0.04 + slack
        ((-0.4 + 2 * BALL_RADIUS - 0.06, 0.0), False),
        ((-0.4 + (2 * BALL_RADIUS - 0.06) / np.sqrt(2), (2 * BALL_RADIUS - 0.06) / np.sqrt(2)), True),  # diagonal
        ((-0.4 + 2 * BALL_RADIUS - 0.12, 0.0), False),
    ],
)
def test_a_tolerance_loosens_overlaps_by_what_moving_both_balls_can_part(position, legal_within_tolerance):
    layout = LAYOUT.copy()
    layout[1] = position  # blue against red
    assert state_violations(state_of(layout))  # illegal as it stands
    assert (state_violations(state_of(layout), tolerance=TOLERANCE) == []) == legal_within_tolerance


def test_a_tolerance_loosens_the_walls_by_itself():
    layout = LAYOUT.copy()
    layout[3] = (0.4, CENTER_HIGH[1] + 0.025)
    assert state_violations(state_of(layout)) and state_violations(state_of(layout), tolerance=TOLERANCE) == []
    layout[3] = (0.4, CENTER_HIGH[1] + 0.035)
    assert state_violations(state_of(layout), tolerance=TOLERANCE)


@settings(max_examples=200, deadline=None)
@given(
    angle=st.floats(0, 2 * np.pi),
    offsets=st.lists(st.floats(-TOLERANCE, TOLERANCE), min_size=4, max_size=4),
)
def test_touching_balls_moved_within_the_tolerance_stay_legal_under_it(angle, offsets):
    """What the transition checks accept as the simulator's state is never illegal under the same tolerance."""
    layout = LAYOUT.copy()
    layout[1] = layout[0] + 2 * BALL_RADIUS * np.array([np.cos(angle), np.sin(angle)])  # blue touching red
    if state_violations(state_of(layout)):  # blue pushed into a wall or another ball: not a touching pair
        return
    layout[:2] += np.reshape(offsets, (2, 2))
    assert state_violations(state_of(layout), tolerance=TOLERANCE) == []
