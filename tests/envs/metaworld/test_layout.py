import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from imaginebench.envs.metaworld.layout import (
    ENTITIES,
    STATE_DIM,
    WORKSPACE_HIGH,
    WORKSPACE_LOW,
    compose_state,
    entity_row,
    entity_slice,
    state_violations,
)


def legal_state() -> np.ndarray:
    return compose_state(
        np.array([0.0, 0.6, 0.2]),
        0.5,
        np.array([0.1, 0.8, 0.1]),
        {"target_object": entity_row([0.0, 0.7, 0.02], [1, 0, 0, 0])},
    )


def test_layout_matches_the_original_91_numbers():
    """docs/original-benchmark.md#meta-world: gripper 0-3, target 4-6, then 7-number slots in the original's order."""
    assert STATE_DIM == 91
    expected_starts = {
        "target_object": 7,
        "button": 14,
        "lock": 21,
        "handle": 28,
        "window": 35,
        "faucet": 42,
        "wall": 49,
        "coffee": 56,
        "coffee_button": 63,
        "hammer": 70,
        "nail": 77,
        "soccer": 84,
    }
    assert {name: entity_slice(name).start for name in ENTITIES} == expected_starts
    state = compose_state(np.array([1.0, 2.0, 3.0]), 0.5, np.array([4.0, 5.0, 6.0]), {"soccer": np.arange(7.0)})
    np.testing.assert_array_equal(state[:7], [1, 2, 3, 0.5, 4, 5, 6])
    np.testing.assert_array_equal(state[84:91], np.arange(7.0))
    assert np.count_nonzero(state[7:84]) == 0


def test_missing_quaternion_becomes_identity():
    np.testing.assert_array_equal(entity_row([0.1, 0.2, 0.3], np.zeros(4)), [0.1, 0.2, 0.3, 1, 0, 0, 0])


def test_legal_state_has_no_violations():
    assert state_violations(legal_state()) == []


def test_each_violation_is_named():
    hand_out = legal_state()
    hand_out[0] = 0.9
    assert any("gripper" in r and "workspace" in r for r in state_violations(hand_out))
    below = legal_state()
    below[entity_slice("target_object")][2] = -0.1
    assert any("target_object is below the table" in r for r in state_violations(below))
    skewed = legal_state()
    skewed[entity_slice("target_object").start + 3 : entity_slice("target_object").stop] = [1, 1, 0, 0]
    assert any("target_object quaternion" in r for r in state_violations(skewed))
    opening = legal_state()
    opening[3] = 1.5
    assert any("opening" in r for r in state_violations(opening))
    assert state_violations(np.zeros(90)) == ["state has shape (90,), expected (91,)"]
    nan = legal_state()
    nan[50] = np.nan
    assert state_violations(nan) == ["state has non-finite numbers"]


@settings(max_examples=50, deadline=None)
@given(
    hand=st.tuples(*[st.floats(lo, hi) for lo, hi in zip(WORKSPACE_LOW, WORKSPACE_HIGH)]),
    height=st.floats(0.0, 0.5),
    quaternion=st.lists(st.floats(-1, 1), min_size=4, max_size=4).filter(lambda q: np.linalg.norm(q) > 0.1),
    entity=st.sampled_from(ENTITIES),
)
def test_states_inside_the_rules_are_legal(hand, height, quaternion, entity):
    quaternion = np.array(quaternion) / np.linalg.norm(quaternion)
    state = compose_state(np.array(hand), 0.3, np.zeros(3), {entity: entity_row([0.0, 0.7, height], quaternion)})
    assert state_violations(state) == []
