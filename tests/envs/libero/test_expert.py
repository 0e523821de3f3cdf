"""The Libero-v0 expert as a pure function of the state (no simulator): the phase it acts in is read
off the state, so behaviour cloning can copy it."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from imaginebench.envs.libero.expert import (
    ASIDE_SHIFT,
    BESIDE,
    CARRY_Z,
    CLOSE,
    CONTACT_GAP,
    DOWN,
    HOVER,
    OPEN,
    POUR_ROLL,
    POUR_X,
    POUR_Z,
    ROTATION_SCALE,
    TOP_HEIGHT,
    aside_point,
    basket_drop,
    expert_action,
    grasp_point,
    rim_grip_point,
)
from imaginebench.envs.libero.layout import (
    BASKET_HALF,
    EEF,
    ENTITIES,
    OBJECT_AREA,
    compose_state,
    hand_fits,
    in_object_area,
)
from imaginebench.envs.libero.tasks import TASKS

SOUP = np.array([-0.1, -0.2, 0.038])
LAYOUT = {
    "alphabet_soup": SOUP,
    "cream_cheese": np.array([0.05, -0.1, 0.009]),
    "salad_dressing": np.array([-0.15, 0.0, 0.073]),
    "basket": np.array([0.0, 0.25, 0.0]),
}
PICK, PLACE = TASKS["pick-soup"].stages[0], TASKS["place-soup"].stages[0]
TAKE_OUT = TASKS["pick-out-of-soup"].stages[0]
UPRIGHT_CAN = Rotation.from_euler("x", 90, degrees=True)
"""The soup can's body frame has its axis along y: standing, it is turned 90° about x (as in the scene)."""
BASKET_TURN = Rotation.from_euler("z", 90, degrees=True)
"""The basket stands turned 90° about the vertical in every start."""


def state(
    hand,
    gap=0.078,
    quaternion=DOWN.as_quat(),
    soup=SOUP,
    soup_turn=UPRIGHT_CAN,
    basket=LAYOUT["basket"],
    basket_turn=BASKET_TURN,
) -> np.ndarray:
    positions = {**LAYOUT, "alphabet_soup": soup, "basket": basket}
    turns = {"alphabet_soup": soup_turn, "basket": basket_turn}
    entities = {
        name: np.array([*positions[name], *turns.get(name, Rotation.identity()).as_quat()]) for name in ENTITIES
    }
    return compose_state(np.zeros(7), hand, quaternion, [gap / 2, -gap / 2], entities)


def in_basket_state(hand, gap=0.078, **kwargs) -> np.ndarray:
    """The can standing in the basket (its grasp point below where the hand, on the rim, can go)."""
    return state(hand, gap, soup=LAYOUT["basket"] + [0.0, 0.0, 0.06], **kwargs)


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


def test_an_object_still_held_in_the_basket_is_lowered_and_let_go_before_the_next_object():
    """Its basket stage completed while the hand was lowering it; the next stage is the cheese's grasp."""
    next_grasp = TASKS["sequential-pick-and-place-all"].stages[2]
    assert next_grasp.obj == "cream_cheese" and next_grasp.action == "grasp"
    held = CONTACT_GAP["alphabet_soup"]
    soup = LAYOUT["basket"] + [0.0, 0.0, 0.14]
    lowering = state(grasp_point(state(np.zeros(3), soup=soup), "alphabet_soup"), held, soup=soup)
    action = expert_action(next_grasp, lowering, lowering)
    assert action[-1] == CLOSE and action[2] < -0.3 and np.all(np.abs(action[:2]) < 0.1)  # on down, still holding it
    drop = basket_drop(lowering, "alphabet_soup")
    soup_at_drop = soup + drop - lowering[EEF]
    arrived = state(drop, held, soup=soup_at_drop)
    assert expert_action(next_grasp, arrived, arrived)[-1] == OPEN


def test_held_object_is_carried_high_over_the_basket_and_lowered_into_it():
    held = CONTACT_GAP["alphabet_soup"]
    low = state(SOUP + [0.0, 0.0, 0.03], held, soup=SOUP + [0.0, 0.0, 0.01])
    assert (
        expert_action(PLACE, low, low)[2] == 1.0 and abs(expert_action(PLACE, low, low)[1]) < 0.05
    )  # straight up first
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


def test_a_can_lying_on_its_side_is_grasped_with_the_hand_turned_across_it():
    lying_along_y = Rotation.identity()  # body axis y: the can's axis lies along the world y axis
    s = state(SOUP + [0.0, 0.0, 0.2], soup_turn=lying_along_y)
    rotation = expert_action(PICK, s, s)[3:6]
    assert abs(rotation[2]) > 0.5 and np.allclose(rotation[:2], 0.0, atol=1e-6)  # a turn about the vertical only
    assert grasp_point(s, "alphabet_soup")[2] < grasp_point(state(np.zeros(3)), "alphabet_soup")[2]


def holding_basket(basket: np.ndarray, **kwargs) -> np.ndarray:
    """Fingers closed on the wall of the basket standing at ``basket``."""
    gripped = state(np.zeros(3), 0.014, basket=basket, **kwargs)
    return state(rim_grip_point(gripped), 0.014, basket=basket, **kwargs)


def test_an_object_out_of_reach_in_the_basket_is_poured_out_first():
    """The hand goes for the basket's wall, lifts the basket it holds, brings it in over ``POUR_X``,
    rolls it over there, and only lets go of the emptied basket away from the fallen object."""
    start = in_basket_state(np.array([0.0, 0.0, 0.3]))
    towards_rim = expert_action(TAKE_OUT, start, start)
    assert towards_rim[-1] == OPEN
    assert towards_rim[0] > 0.3  # to the grip point on the wall, +x of the can (straight below would be 0)
    at_rim = in_basket_state(rim_grip_point(start) + [0.0, 0.0, 0.005])
    assert expert_action(TAKE_OUT, at_rim, start)[-1] == CLOSE
    gripping = in_basket_state(rim_grip_point(start), gap=0.014)
    lift = expert_action(TAKE_OUT, gripping, start)
    assert lift[2] == 1.0 and lift[-1] == CLOSE and np.allclose(lift[3:6], 0.0, atol=1e-6)
    raised = LAYOUT["basket"] + [0.0, 0.0, POUR_Z - 0.13]
    high = holding_basket(raised, soup=raised + [0.0, 0.0, 0.06])
    bring_in = expert_action(TAKE_OUT, high, start)
    assert bring_in[0] < -0.5 and np.allclose(bring_in[3:6], 0.0, atol=1e-6)  # towards POUR_X, not rolled yet
    over = raised + [POUR_X - high[EEF][0], 0.0, 0.0]
    roll = expert_action(TAKE_OUT, holding_basket(over, soup=over + [0.0, 0.0, 0.06]), start)
    assert roll[-1] == CLOSE and roll[3] < -0.5  # rolling about x, towards POUR_ROLL
    assert POUR_ROLL < 0
    fallen = over + [0.0, -0.1, 0.038 - over[2]]
    keep = expert_action(TAKE_OUT, holding_basket(over, soup=fallen), start)
    assert (
        keep[-1] == CLOSE and keep[1] > 0 and keep[0] == 0.0
    )  # carried away from the can, along y only, before letting go


def test_an_object_is_lowered_into_the_basket_beside_one_already_in_it():
    hand = np.array([*LAYOUT["basket"][:2], 0.3])
    alone = basket_drop(state(hand), "cream_cheese")
    can = LAYOUT["basket"] + [0.0, 0.02, 0.06]
    beside = basket_drop(state(hand, soup=can), "cream_cheese")
    assert np.allclose(beside[:2] - alone[:2], [0.0, -BESIDE])  # away from the can, which stands +y of the centre
    assert beside[2] > max(can[2] + TOP_HEIGHT["alphabet_soup"], alone[2])  # 6 cm from the can's axis: above its top
    farther = LAYOUT["basket"] + [0.0, 0.06, 0.06]
    assert np.isclose(
        basket_drop(state(hand, soup=farther), "cream_cheese")[2], alone[2]
    )  # clear of it: as low as alone


def test_a_hand_low_over_the_basket_rises_above_its_rim_before_moving_off():
    pick_cheese = TASKS["pick-cheese"].stages[0]
    released = state(np.array([*LAYOUT["basket"][:2], 0.13]))  # 12 cm above the cheese's grasp point
    action = expert_action(pick_cheese, released, released)
    assert action[2] > 0.5 and np.allclose(action[:2], 0.0)  # straight up, not off towards the cheese


def test_an_object_is_put_aside_no_nearer_the_robot_than_the_objects_start_area():
    """Farthest from the others would be 16 cm towards the robot's base, where the hand cannot get down."""
    near_edge = np.array([OBJECT_AREA[0][0] + 0.002, -0.06, 0.038])
    start = state(np.array([-0.15, 0.0, 0.26]), soup=near_edge)
    point = aside_point("alphabet_soup", start)
    assert point[0] >= OBJECT_AREA[0][0] and np.linalg.norm(point[:2] - near_edge[:2]) == pytest.approx(ASIDE_SHIFT)


def test_an_object_is_put_aside_inside_the_start_area_where_the_hand_has_room():
    """Two starts the expert failed: the cheese put aside 19 cm out in x (beyond reach at carrying
    height), and put aside so close to the basket that the hand came down on its rim."""
    for cheese, soup, dressing, basket in (
        ([0.032, -0.212], [-0.21, -0.25], [-0.22, -0.08], [0.05, 0.28]),
        ([-0.158, -0.036], [-0.23, -0.23], [-0.06, -0.13], [-0.05, 0.25]),
    ):
        xy = {"alphabet_soup": soup, "cream_cheese": cheese, "salad_dressing": dressing, "basket": basket}
        start = compose_state(
            np.zeros(7),
            [-0.15, 0.0, 0.26],
            DOWN.as_quat(),
            [0.039, -0.039],
            {name: np.array([*xy[name], 0.01, 0.0, 0.0, 0.0, 1.0]) for name in ENTITIES},
        )
        point = aside_point("cream_cheese", start)[:2]
        assert in_object_area(point)
        assert (
            hand_fits(point, np.array(basket), BASKET_HALF)
            and hand_fits(point, np.array(soup))
            and hand_fits(point, np.array(dressing))
        )
