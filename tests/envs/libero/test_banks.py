"""Libero-v0 start layouts (pure: no simulator)."""

import numpy as np
import pytest

from imaginebench.envs.libero.build_banks import BASKET_GAP, OBJECT_GAP, apart, sample_layout
from imaginebench.envs.libero.layout import HAND_HALF, OBJECT_RADIUS, OBJECTS, hand_fits, in_object_area

HAND_ROOM = HAND_HALF + OBJECT_RADIUS


def test_the_start_that_failed_sequential_tasks_is_too_tight_for_the_hand():
    cheese, dressing = np.array([0.02, -0.18]), np.array([0.05, -0.30])
    assert np.linalg.norm(cheese - dressing) >= OBJECT_GAP and not apart(cheese, dressing)
    assert apart(cheese, dressing + [HAND_ROOM[0], 0.0]) and apart(cheese, dressing - [0.0, 0.03])


@pytest.mark.parametrize("seed", range(20))
def test_sampled_layouts_leave_room_to_grasp_every_object(seed):
    layout = sample_layout(np.random.default_rng(seed))
    for i, a in enumerate(OBJECTS):
        assert in_object_area(layout[a])
        assert np.linalg.norm(layout[a] - layout["basket"]) >= BASKET_GAP
        for b in OBJECTS[i + 1 :]:
            assert hand_fits(layout[a], layout[b])
