import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from imaginebench.envs.babyai import DOMAIN
from imaginebench.envs.babyai.layout import (
    COLORS,
    OBJECTS,
    ROOM_CELLS,
    STATE_FIELDS,
    STATE_HIGH,
    STATE_INDEX,
    World,
    decode_state,
    encode_state,
)
from tests.envs.babyai.worlds import make_world


def test_state_layout_is_the_original_17_fields():
    assert DOMAIN.state_dim == len(STATE_FIELDS) == 17
    assert STATE_FIELDS[:3] == ("ball_color", "ball_row", "ball_col")
    assert STATE_FIELDS[9:13] == ("door_color", "door_row", "door_col", "door_state")
    assert STATE_FIELDS[-4:] == ("agent_row", "agent_col", "carry_type", "carry_color")
    assert STATE_INDEX["agent_col"] == 14


def test_encode_state_uses_minigrid_indices_rows_before_columns():
    state = encode_state(make_world(agent=(2, 4), ball=(5, 6)))
    assert state.dtype == np.float32 and state.shape == (17,)
    assert state[STATE_INDEX["ball_color"]] == 0  # red
    assert (state[STATE_INDEX["ball_row"]], state[STATE_INDEX["ball_col"]]) == (6, 5)
    assert (state[STATE_INDEX["agent_row"]], state[STATE_INDEX["agent_col"]]) == (4, 2)
    assert (state[STATE_INDEX["door_row"]], state[STATE_INDEX["door_col"]], state[STATE_INDEX["door_state"]]) == (
        3,
        7,
        1,
    )
    assert (state[STATE_INDEX["carry_type"]], state[STATE_INDEX["carry_color"]]) == (0, 0)


def test_carried_object_is_reported_at_origin_with_its_type_and_colour():
    state = encode_state(make_world(carrying="key"))
    assert (state[STATE_INDEX["key_row"]], state[STATE_INDEX["key_col"]]) == (0, 0)
    assert state[STATE_INDEX["key_color"]] == 2  # blue
    assert (state[STATE_INDEX["carry_type"]], state[STATE_INDEX["carry_color"]]) == (5, 2)  # key, blue


@st.composite
def worlds(draw) -> World:
    cells = draw(st.lists(st.sampled_from(ROOM_CELLS), min_size=3, max_size=3, unique=True))
    carrying = draw(st.sampled_from((None, *OBJECTS)))
    colors = {name: draw(st.sampled_from(COLORS)) for name in (*OBJECTS, "door")}
    positions = {obj: None if obj == carrying else cell for obj, cell in zip(OBJECTS, cells)}
    return World(
        colors, positions, draw(st.integers(1, 6)), draw(st.integers(0, 2)), draw(st.sampled_from(ROOM_CELLS)), carrying
    )


@given(worlds())
def test_state_round_trips_and_stays_in_bounds(world):
    state = encode_state(world)
    assert np.all(state >= 0) and np.all(state <= STATE_HIGH)
    assert decode_state(state) == world
