"""The Libero-v0 expert as a pure function of the state (no simulator): the phase it acts in is read
off the state, so behaviour cloning can copy it."""

import numpy as np
from scipy.spatial.transform import Rotation

from imaginebench.envs.libero.expert import (
    CARRY_Z, CLOSE, CONTACT_GAP, DOWN, HOVER, OPEN, ROTATION_SCALE, basket_drop, expert_action, grasp_point,
)  # fmt: skip
from imaginebench.envs.libero.layout import ENTITIES, compose_state
from imaginebench.envs.libero.tasks import TASKS

SOUP = np.array([-0.1, -0.2, 0.038])
LAYOUT = {"alphabet_soup": SOUP, "cream_cheese": np.array([0.05, -0.1, 0.009]),
          "salad_dressing": np.array([-0.15, 0.0, 0.073]), "basket": np.array([0.0, 0.25, 0.0])}  # fmt: skip
PICK, PLACE = TASKS["pick-soup"].stages[0], TASKS["place-soup"].stages[0]


def state(hand, gap=0.078, quaternion=DOWN.as_quat(), soup=SOUP) -> np.ndarray:
    positions = {**LAYOUT, "alphabet_soup": soup}
    entities = {name: np.array([*positions[name], 0.0, 0.0, 0.0, 1.0]) for name in ENTITIES}
    return compose_state(np.zeros(7), hand, quaternion, [gap / 2, -gap / 2], entities)


def at_grasp(gap: float = 0.078) -> np.ndarray:
    return state(grasp_point(state(np.zeros(3)), "alphabet_soup") + [0.0, 0.0, 0.008], gap)


def test_open_hand_far_above_moves_towards_the_hover_point_without_closing():
    s = state(SOUP + [0.2, 0.1, 0.25])
    action = expert_action(PICK, s, s)
    assert action[-1] == OPEN and action[0] < 0 and action[1] < 0
    assert np.allclose(action[3:6], 0.0, atol=1e-6)  # already pointing down: no rotation


def test_fingers_close_at_the_grasp_point_and_lift_once_they_hold_the_object():
    closing = expert_action(PICK, at_grasp(), at_grasp())
    assert closing[-1] == CLOSE and np.all(np.abs(closing[:3]) < 0.15)  # stays put while closing
    gripped = at_grasp(CONTACT_GAP["alphabet_soup"])
    lifting = expert_action(PICK, gripped, at_grasp())
    assert lifting[-1] == CLOSE and lifting[2] == 1.0


def test_fingers_closed_on_nothing_open_and_back_up():
    action = expert_action(PICK, at_grasp(0.001), at_grasp())
    assert action[-1] == OPEN and action[2] > 0.5


def test_hand_over_the_object_but_off_centre_goes_back_up_before_descending():
    point = grasp_point(state(np.zeros(3)), "alphabet_soup")
    s = state(point + [0.03, 0.0, HOVER])
    assert expert_action(PICK, s, s)[2] >= 0.0  # no descent until centred
    s = state(point + [0.005, 0.0, HOVER])
    assert expert_action(PICK, s, s)[2] == -1.0


def test_held_object_is_carried_high_over_the_basket_and_lowered_into_it():
    held = CONTACT_GAP["alphabet_soup"]
    low = state(SOUP + [0.0, 0.0, 0.03], held, soup=SOUP + [0.0, 0.0, 0.01])
    assert expert_action(PLACE, low, low)[2] == 1.0 and abs(expert_action(PLACE, low, low)[1]) < 0.05  # straight up first
    high_soup = np.array([SOUP[0], SOUP[1], CARRY_Z - 0.02])
    high = state(high_soup + [0.0, 0.0, 0.02], held, soup=high_soup)
    action = expert_action(PLACE, high, high)
    assert action[1] == 1.0 and action[-1] == CLOSE  # towards the basket (+y) at carrying height
    above = np.array([*LAYOUT["basket"][:2], 0.2])
    over = state(above + [0.0, 0.0, 0.02], held, soup=above)
    assert expert_action(PLACE, over, over)[2] == -1.0
    drop_soup = basket_drop(over, "alphabet_soup") - [0.0, 0.0, 0.02]
    dropped = state(drop_soup + [0.0, 0.0, 0.02], held, soup=drop_soup)
    assert expert_action(PLACE, dropped, dropped)[-1] == OPEN


def test_a_turned_hand_is_turned_back_to_pointing_down():
    turned = Rotation.from_rotvec([0.15, -0.1, 0.05]) * DOWN
    s = state(SOUP + [0.0, 0.0, 0.2], quaternion=turned.as_quat())
    rotation = expert_action(PICK, s, s)[3:6]
    corrected = Rotation.from_rotvec(ROTATION_SCALE * rotation) * turned  # OSC_POSE: goal = delta ∘ current
    assert (corrected * DOWN.inv()).magnitude() < 1e-6
