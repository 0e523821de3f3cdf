import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from imaginebench.envs.babyai import DOMAIN, instruction_texts
from imaginebench.envs.babyai.layout import DOOR_LOCKED, DOOR_OPEN, OBJECTS, ROOM_CELLS, World, manhattan
from imaginebench.envs.babyai.phrasings import PHRASINGS
from imaginebench.envs.babyai.tasks import (
    CENTER,
    FAR,
    LEVEL_TASKS,
    TASKS,
    Goal,
    all_instruction_slots,
    goto_cell,
    is_success,
    sample_start,
)
from imaginebench.levels import LEVELS
from tests.envs.babyai.worlds import make_world

ALL_TASKS = sorted({task for tasks in LEVEL_TASKS.values() for task in tasks})


def test_levels_have_the_original_task_names():
    assert set(DOMAIN.tasks) == set(LEVELS)
    assert DOMAIN.tasks["train"] == DOMAIN.tasks["rephrase"] == ("GoTo", "Open", "PickUp", "PutNext")
    assert DOMAIN.tasks["easy"] == ("OpenGo", "OpenPick", "GoWall", "GoCenter")
    assert DOMAIN.tasks["hard"] == ("OpenLock", "PutLine", "PutPile")


# ----------------------------------------------------------------------------- success checks

SUCCESS_CASES = [
    # (goal, world where it holds, world where it does not)
    (Goal("GoTo", ("box",)), make_world(agent=(1, 3)), make_world(agent=(2, 3))),
    (Goal("GoTo", ("door",)), make_world(agent=(6, 3)), make_world(agent=(6, 4))),
    (Goal("Open", ("door",)), make_world(door_state=DOOR_OPEN), make_world()),
    (Goal("PickUp", ("key",)), make_world(carrying="key"), make_world(carrying="ball")),
    (Goal("PutNext", ("ball", "box")), make_world(box=(1, 2)), make_world(box=(2, 2))),
    (Goal("PutNext", ("ball", "box")), make_world(box=(2, 1)), make_world(box=(2, 1), carrying="ball")),
    (Goal("OpenGo", ("door",)), make_world(door_state=DOOR_OPEN, agent=(1, 5)), make_world(agent=(1, 5))),
    (
        Goal("OpenGo", ("door",)),
        make_world(door_state=DOOR_OPEN, agent=(1, 1)),
        make_world(door_state=DOOR_OPEN, agent=(2, 1)),
    ),
    (Goal("OpenPick", ("door",)), make_world(door_state=DOOR_OPEN, carrying="box"), make_world(carrying="box")),
    (Goal("OpenPick", ("door",)), make_world(door_state=DOOR_OPEN, carrying="ball"), make_world(door_state=DOOR_OPEN)),
    (Goal("GoWall", corner="north-east"), make_world(agent=(6, 1)), make_world(agent=(5, 1))),
    (Goal("GoWall", corner="south-west"), make_world(agent=(1, 6)), make_world(agent=(6, 6))),
    (Goal("GoCenter", ("ball",)), make_world(agent=(4, 3), carrying="ball"), make_world(agent=(4, 3))),
    (Goal("GoCenter", ("ball",)), make_world(agent=(3, 4), carrying="ball"), make_world(agent=(2, 4), carrying="ball")),
    (
        Goal("OpenLock", ("key",)),
        make_world(door_state=DOOR_OPEN, carrying="key"),
        make_world(door_state=DOOR_LOCKED, carrying="key"),
    ),
    (Goal("PutLine", OBJECTS), make_world(), make_world(key=(2, 5))),
    (
        Goal("PutLine", OBJECTS),
        make_world(ball=(2, 4), box=(4, 4), key=(6, 4)),
        make_world(ball=(2, 4), box=(4, 4), key=(6, 4), carrying="box"),
    ),
    (
        Goal("PutPile", OBJECTS),
        make_world(ball=(2, 2), box=(3, 2), key=(2, 3)),
        make_world(ball=(2, 2), box=(3, 2), key=(4, 2)),
    ),
    (
        Goal("PutPile", OBJECTS),
        make_world(ball=(5, 5), box=(5, 4), key=(4, 4)),
        make_world(ball=(5, 5), box=(5, 4), key=(3, 4)),
    ),
]


@pytest.mark.parametrize(
    "goal, holds, fails", SUCCESS_CASES, ids=[f"{g.task}-{i}" for i, (g, _, _) in enumerate(SUCCESS_CASES)]
)
def test_success_check_on_hand_made_worlds(goal, holds, fails):
    assert is_success(holds, goal)
    assert not is_success(fails, goal)


def test_every_task_has_a_success_case():
    assert {goal.task for goal, _, _ in SUCCESS_CASES} == set(ALL_TASKS)


def test_openpick_is_solvable_unlike_the_original():
    """Quirk 10 of docs/original-benchmark.md: the original's inverted check could never succeed."""
    assert is_success(make_world(door_state=DOOR_OPEN, carrying="key"), Goal("OpenPick", ("door",)))


@st.composite
def layouts(draw) -> World:
    cells = draw(st.lists(st.sampled_from(ROOM_CELLS), min_size=3, max_size=3, unique=True))
    return make_world(ball=cells[0], box=cells[1], key=cells[2])


@given(layouts())
def test_a_pile_is_never_a_line(world):
    in_pile = is_success(world, Goal("PutPile", OBJECTS))
    in_line = is_success(world, Goal("PutLine", OBJECTS))
    assert not (in_pile and in_line)


# ----------------------------------------------------------------------------- start distributions


@given(st.sampled_from(ALL_TASKS), st.integers(0, 2**32 - 1))
def test_start_states_are_valid_and_not_already_solved(task, seed):
    world, goal = sample_start(task, np.random.default_rng(seed))
    assert goal.task == task and goal in TASKS[task].goals
    assert not is_success(world, goal)
    floor = list(world.floor_cells().values())
    assert len(floor) == 3 and world.carrying is None
    assert all(manhattan(a, b) >= 2 for i, a in enumerate(floor) for b in floor[i + 1 :]), "objects start apart"
    assert world.agent in ROOM_CELLS and world.object_at(world.agent) is None
    assert (world.door_state == DOOR_LOCKED) == (task == "OpenLock")
    if task == "OpenLock":
        assert world.colors["door"] == world.colors["key"]
    if task == "GoTo":
        assert manhattan(world.agent, goto_cell(world, goal.objects[0])) >= FAR
    if task == "GoCenter":
        assert all(manhattan(world.positions[goal.objects[0]], c) >= 2 for c in CENTER)


def test_colours_vary_across_resets():
    """Quirk 11 of docs/original-benchmark.md: the original froze colours per env instance."""
    rng = np.random.default_rng(0)
    colours = {tuple(sample_start("PutNext", rng)[0].colors.values()) for _ in range(20)}
    assert len(colours) > 10


# ----------------------------------------------------------------------------- instructions


def test_phrasing_counts():
    for task in LEVEL_TASKS["train"]:
        assert len(PHRASINGS["train"][task]) >= 30
        assert len(PHRASINGS["rephrase"][task]) >= 15
    for level in ("easy", "hard"):
        for task in LEVEL_TASKS[level]:
            assert len(PHRASINGS[level][task]) >= 5
    for level, tasks in PHRASINGS.items():
        for task, templates in tasks.items():
            assert len(set(templates)) == len(templates), f"duplicate template in {level}/{task}"


def test_rephrase_and_train_are_disjoint():
    for task in LEVEL_TASKS["train"]:
        assert not set(PHRASINGS["train"][task]) & set(PHRASINGS["rephrase"][task])
    assert not set(instruction_texts("train")) & set(instruction_texts("rephrase"))


@pytest.mark.parametrize("level", LEVELS)
def test_instruction_texts_cover_every_template_and_filling(level):
    texts = instruction_texts(level)
    expected = sum(len(PHRASINGS[level][t]) * len(all_instruction_slots(t)) for t in LEVEL_TASKS[level])
    assert len(texts) == len(set(texts)) == expected
    assert len(texts) < 15_000, "every instruction is encoded up front"
    assert not any("{" in text or "}" in text for text in texts)


@pytest.mark.parametrize("task", ALL_TASKS)
def test_templates_name_the_colours_of_what_the_goal_names(task):
    level = next(level for level, tasks in LEVEL_TASKS.items() if task in tasks)
    named = max(len(goal.objects) for goal in TASKS[task].goals)
    fields = ["{color}", "{color2}", "{color3}"][:named]
    for template in PHRASINGS[level][task]:
        for field in fields:
            assert field in template, f"{level}/{task}: {template!r} does not name {field}"
