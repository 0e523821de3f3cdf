import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from imaginebench.envs.clevr import DOMAIN, instruction_texts
from imaginebench.envs.clevr.phrasings import PHRASINGS, slots
from imaginebench.envs.clevr.tasks import (
    GATHER_RADIUS,
    LEVEL_TASKS,
    NEAR,
    TASKS,
    Goal,
    Relation,
    is_success,
    sample_start,
)
from imaginebench.levels import LEVELS

RED, BLUE, GREEN, PURPLE, CYAN = range(5)
FAR_APART = np.array([[-0.45, -0.15], [0.45, 0.55], [0.0, 0.2], [-0.45, 0.55], [0.45, -0.15]])


def layout(**moved):
    """``FAR_APART`` with some balls moved, e.g. ``layout(red=(0.1, 0.2))``."""
    positions = FAR_APART.copy()
    for name, xy in moved.items():
        positions[["red", "blue", "green", "purple", "cyan"].index(name)] = xy
    return positions


def test_levels_and_tasks():
    assert set(DOMAIN.tasks) == set(LEVELS)
    assert DOMAIN.tasks["train"] == DOMAIN.tasks["rephrase"] == ("push-behind", "push-left", "push-front", "push-right")
    assert DOMAIN.tasks["easy"] == ("step-behind", "step-left", "step-front", "step-right")
    assert DOMAIN.tasks["hard"] == ("two-relations", "three-relations", "line-up", "gather")
    assert sum(len(TASKS[t].goals) for t in LEVEL_TASKS["train"]) == 80  # 5 balls x 4 others x 4 sides


RELATION_CASES = [
    # (relation, positions where it holds, positions where it does not)
    (Relation(RED, GREEN, "behind"), layout(red=(0.0, 0.2 + 0.25)), layout(red=(0.0, 0.2 + NEAR + 0.01))),
    (
        Relation(RED, GREEN, "left"),
        layout(red=(-0.25, 0.2 + 0.1)),
        layout(red=(-0.2, 0.2 + 0.21)),
    ),  # near, but 46 degrees off
    (Relation(RED, GREEN, "front"), layout(red=(0.05, 0.2 - 0.22)), layout(red=(0.05, 0.2 + 0.22))),
    (Relation(CYAN, GREEN, "right"), layout(cyan=(0.3, 0.2)), layout(cyan=(-0.3, 0.2))),
]


@pytest.mark.parametrize("relation, holds, fails", RELATION_CASES, ids=[r.side for r, _, _ in RELATION_CASES])
def test_relation_check_on_hand_placed_balls(relation, holds, fails):
    goal = Goal(f"push-{relation.side}", (relation,))
    assert is_success(holds, FAR_APART, goal)
    assert not is_success(fails, FAR_APART, goal)


def test_combined_relations_need_every_part():
    goal = Goal("two-relations", (Relation(RED, GREEN, "behind"), Relation(CYAN, GREEN, "right")))
    assert is_success(layout(red=(0.0, 0.45), cyan=(0.3, 0.2)), FAR_APART, goal)
    assert not is_success(layout(red=(0.0, 0.45)), FAR_APART, goal)


def test_one_step_is_judged_on_the_resulting_state():
    goal = Goal("step-left", ball=GREEN, side="left")
    assert is_success(layout(green=(-0.15, 0.2)), FAR_APART, goal)
    assert not is_success(layout(green=(-0.05, 0.2)), FAR_APART, goal)  # not far enough
    assert not is_success(layout(green=(0.15, 0.2)), FAR_APART, goal)  # wrong way
    assert not is_success(layout(green=(-0.15, 0.2), red=(-0.3, -0.15)), FAR_APART, goal)  # another ball moved
    assert not is_success(FAR_APART, FAR_APART, goal)


def test_line_up_in_colour_order_left_to_right():
    goal = Goal("line-up")
    line = np.array([[-0.4 + 0.2 * i, 0.1 + 0.05 * (i % 2)] for i in range(5)])
    assert is_success(line, line, goal)
    assert not is_success(line[[1, 0, 2, 3, 4]], line, goal)  # red and blue swapped
    steep = line.copy()
    steep[4] = steep[3] + [0.2, 0.2]  # 45 degrees up
    assert not is_success(steep, line, goal)


def test_gather_around_the_green_ball():
    goal = Goal("gather")
    ring = 0.9 * GATHER_RADIUS * np.array([[1, 0], [0, 1], [-1, 0], [0, -1]]) + [0.0, 0.2]
    gathered = np.insert(ring, GREEN, [0.0, 0.2], axis=0)
    assert is_success(gathered, gathered, goal)
    gathered[CYAN] = [0.0, 0.2 - 1.1 * GATHER_RADIUS]
    assert not is_success(gathered, gathered, goal)


def test_hard_relation_goals_are_consistent():
    for task in ("two-relations", "three-relations"):
        goals = TASKS[task].goals
        assert len(goals) == len(set(goals)) == 40
        for goal in goals:
            sources = [r.src for r in goal.relations]
            assert len(set(sources)) == len(sources) == (2 if task == "two-relations" else 3)
            assert not {r.dst for r in goal.relations} & set(sources)
            assert len({(r.dst, r.side) for r in goal.relations}) == len(goal.relations)


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(sorted(TASKS)), st.integers(0, 2**32 - 1))
def test_sampled_starts_do_not_already_succeed(task, seed):
    positions, goal = sample_start(task, np.random.default_rng(seed))
    assert goal.task == task and goal in TASKS[task].goals
    assert not is_success(positions, positions, goal)


def test_train_and_rephrase_phrasings_are_disjoint_and_all_fill():
    assert not set(PHRASINGS["train"]["push-left"]) & set(PHRASINGS["rephrase"]["push-left"])
    assert not set(instruction_texts("train")) & set(instruction_texts("rephrase"))
    for level in LEVELS:
        texts = instruction_texts(level)
        assert len(texts) == len(set(texts)) and all("{" not in t for t in texts)
    assert len(instruction_texts("train")) == 80 * 18


def test_slots_name_the_goal():
    assert slots(Goal("push-left", (Relation(RED, BLUE, "left"),))) == {
        "src": "red",
        "dst": "blue",
        "rel": "to the left of",
    }
    assert slots(Goal("step-behind", ball=CYAN, side="behind")) == {"color": "cyan", "way": "backward"}
    three = Goal(
        "three-relations",
        (Relation(RED, BLUE, "left"), Relation(GREEN, BLUE, "front"), Relation(CYAN, PURPLE, "behind")),
    )
    assert slots(three)["clauses"] == (
        "the red ball to the left of the blue ball, the green ball in front of the blue ball and the cyan ball behind the purple ball"
    )
