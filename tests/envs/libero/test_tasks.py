"""Libero-v0 task checks, phrasings and legality on hand-made 44-number states: no simulator needed."""

import numpy as np
import pytest

from imaginebench.envs.libero import DOMAIN, instruction_texts
from imaginebench.envs.libero.layout import EEF, ENTITIES, STATE_DIM, compose_state, entity_slice, state_violations
from imaginebench.envs.libero.phrasings import PHRASINGS
from imaginebench.envs.libero.tasks import LEVEL_TASKS, LIFT, REACH_RADIUS, TASKS, reward, rollout_rewards
from imaginebench.envs.staged import staged_success_flags
from imaginebench.levels import LEVELS

UPRIGHT = [0.0, 0.0, 0.0, 1.0]
HOME = np.array([-0.15, 0.0, 0.26])
BASKET = np.array([0.0, 0.25, 0.0])
LAYOUT = {
    "alphabet_soup": [-0.1, -0.2, 0.038],
    "cream_cheese": [0.05, -0.1, 0.009],
    "salad_dressing": [-0.15, 0.0, 0.073],
}


def state(eef=HOME, **moved) -> np.ndarray:
    """The default layout with some entities moved (name → xyz); the basket at ``BASKET``."""
    positions = {**LAYOUT, "basket": BASKET, **moved}
    entities = {name: np.array([*positions[name], *UPRIGHT]) for name in ENTITIES}
    return compose_state(np.zeros(7), eef, UPRIGHT, [0.04, -0.04], entities)


def solved(task: str, *states) -> bool:
    return bool(staged_success_flags(TASKS[task].stages, np.stack(states))[-1])


def in_basket(name: str) -> np.ndarray:
    return BASKET + np.array([0.02, -0.03, 0.04])


def held(name: str, height: float = 0.1) -> tuple[np.ndarray, np.ndarray]:
    """(end effector, object) positions with the object lifted ``height`` in the gripper."""
    obj = np.array(LAYOUT[name]) + [0.0, 0.0, height]
    return obj + [0.0, 0.0, 0.02], obj


def test_levels_hold_the_spec_tasks():
    assert {level: len(LEVEL_TASKS[level]) for level in LEVELS} == {"train": 6, "rephrase": 6, "easy": 12, "hard": 13}
    assert sum(len(LEVEL_TASKS[level]) for level in LEVELS) == 37
    assert set(LEVEL_TASKS["rephrase"]) == set(LEVEL_TASKS["train"])
    assert DOMAIN.state_dim == STATE_DIM == 44 and DOMAIN.action_dim == 7


def test_phrasings_cover_every_task_and_rephrase_is_unseen():
    for level in LEVELS:
        assert set(PHRASINGS[level]) == set(LEVEL_TASKS[level])
    assert all(len(PHRASINGS["train"][t]) == 1 and len(PHRASINGS["rephrase"][t]) == 10 for t in LEVEL_TASKS["train"])
    assert not set(instruction_texts("train")) & set(instruction_texts("rephrase"))
    assert len(set(instruction_texts("hard"))) == 13


def test_layout_slices_are_the_spec_indices():
    assert (EEF.start, entity_slice("alphabet_soup").start, entity_slice("basket").stop) == (7, 16, 44)
    s = state()
    assert s.shape == (44,) and state_violations(s) == []


def test_pick_needs_the_object_lifted_in_the_gripper():
    start = state()
    eef, obj = held("alphabet_soup")
    assert solved("pick-soup", start, state(eef=eef, alphabet_soup=obj))
    eef_low, obj_low = held("alphabet_soup", height=LIFT / 2)
    assert not solved("pick-soup", start, state(eef=eef_low, alphabet_soup=obj_low))  # barely lifted
    assert not solved(
        "pick-soup", start, state(eef=eef + [0.2, 0, 0], alphabet_soup=obj)
    )  # not in the gripper (thrown)
    assert not solved("pick-cheese", start, state(eef=eef, alphabet_soup=obj))  # the wrong object


def test_reach_needs_the_hand_at_the_object():
    start = state()
    cheese = np.array(LAYOUT["cream_cheese"])
    assert solved("reach-cheese", start, state(eef=cheese + [0.0, 0.0, REACH_RADIUS - 0.005]))
    assert not solved("reach-cheese", start, state(eef=cheese + [0.0, 0.0, REACH_RADIUS + 0.005]))


def test_place_checks_the_basket_region_per_object():
    start = state()
    assert solved("place-dressing", start, state(salad_dressing=in_basket("salad_dressing")))
    assert not solved("place-dressing", start, state(salad_dressing=BASKET + [0.2, 0.0, 0.04]))
    # the tall dressing is allowed a larger height difference than the soup (docs/original-benchmark.md#libero)
    assert solved("place-dressing", start, state(salad_dressing=BASKET + [0.0, 0.0, 0.2]))
    assert not solved("place-soup", start, state(alphabet_soup=BASKET + [0.0, 0.0, 0.2]))


def test_pick_and_place_needs_the_grasp_first():
    start = state()
    eef, obj = held("cream_cheese")
    placed = state(cream_cheese=in_basket("cream_cheese"))
    assert not solved("pick-and-place-cheese", start, placed)
    assert solved("pick-and-place-cheese", start, state(eef=eef, cream_cheese=obj), placed)


def test_place_on_another_object():
    start = state()
    eef, obj = held("alphabet_soup")
    on_cheese = np.array(LAYOUT["cream_cheese"]) + [0.03, 0.0, 0.05]
    assert solved(
        "pick-soup-and-place-to-cheese", start, state(eef=eef, alphabet_soup=obj), state(alphabet_soup=on_cheese)
    )
    assert not solved(
        "pick-soup-and-place-to-dressing", start, state(eef=eef, alphabet_soup=obj), state(alphabet_soup=on_cheese)
    )


def test_sequential_all_checks_every_object():
    """Quirk 13 of docs/original-benchmark.md: the original checked the cream cheese twice and never the salad dressing."""
    states = [state()]
    placed: dict[str, np.ndarray] = {}
    for name in ("alphabet_soup", "cream_cheese"):
        eef, obj = held(name)
        states.append(state(eef=eef, **placed, **{name: obj}))
        placed[name] = in_basket(name)
        states.append(state(**placed))
    assert not solved("sequential-pick-and-place-all", *states)
    eef, obj = held("salad_dressing")
    states += [
        state(eef=eef, **placed, salad_dressing=obj),
        state(**placed, salad_dressing=in_basket("salad_dressing")),
    ]
    assert solved("sequential-pick-and-place-all", *states)


def test_aside_needs_a_lift_and_a_rest_away_from_the_start():
    start = state()
    eef, obj = held("salad_dressing")
    put_down = np.array(LAYOUT["salad_dressing"]) + [0.0, -0.15, 0.0]
    assert solved(
        "pick-and-place-aside-dressing", start, state(eef=eef, salad_dressing=obj), state(salad_dressing=put_down)
    )
    assert not solved("pick-and-place-aside-dressing", start, state(salad_dressing=put_down))  # pushed, not picked
    nudged = np.array(LAYOUT["salad_dressing"]) + [0.0, -0.05, 0.0]
    assert not solved(
        "pick-and-place-aside-dressing", start, state(eef=eef, salad_dressing=obj), state(salad_dressing=nudged)
    )


def test_pick_out_of_the_basket():
    start = state(alphabet_soup=in_basket("alphabet_soup"))
    lifted = in_basket("alphabet_soup") + [0.0, 0.0, 0.1]
    away = lifted + [0.0, -0.5, 0.0]
    assert solved(
        "pick-out-of-soup",
        start,
        state(eef=lifted + [0, 0, 0.02], alphabet_soup=lifted),
        state(eef=away + [0, 0, 0.02], alphabet_soup=away),
    )
    assert not solved("pick-out-of-soup", start, state(eef=lifted + [0, 0, 0.02], alphabet_soup=lifted))


def test_reward_starts_from_the_new_episode_and_pays_stage_events():
    """Quirk 14 of docs/original-benchmark.md: the first step's progress is measured from this episode's first state."""
    task = TASKS["pick-and-place-soup"]
    start = state()
    closer = state(eef=HOME + (np.array(LAYOUT["alphabet_soup"]) - HOME) * 0.5)
    assert reward(task, 0, 0, start, closer, start) > 0
    assert reward(task, 0, 0, closer, start, start) < 0
    assert reward(task, 0, 1, start, closer, start) == 1.0
    assert reward(task, 1, 2, start, closer, start) == 2.0  # the last stage also pays the success bonus


def test_rollout_rewards_pay_the_step_rewards_along_the_states():
    """What imagination rewards a generated rollout with: the env's step rewards on the same states."""
    task = TASKS["pick-and-place-soup"]
    eef, soup = held("alphabet_soup")
    start, closer = state(), state(eef=HOME + (np.array(LAYOUT["alphabet_soup"]) - HOME) * 0.5)
    basket = state(eef=in_basket("alphabet_soup") + [0, 0, 0.02], alphabet_soup=in_basket("alphabet_soup"))
    states = np.stack([start, closer, state(eef=eef, alphabet_soup=soup), basket])
    success = staged_success_flags(task.stages, states)
    np.testing.assert_array_equal(success, [False, False, False, True])
    expected = [reward(task, 0, 0, start, closer, start), 1.0, 2.0]
    np.testing.assert_allclose(rollout_rewards(task, states, success), expected)
    # the last stage completed on a state judged not a success (an illegal one): the solve bonus follows `success`
    later = np.concatenate([states, basket[None]])
    np.testing.assert_allclose(rollout_rewards(task, later, [False] * 4 + [True]), [expected[0], 1.0, 1.0, 1.0])
    np.testing.assert_allclose(rollout_rewards(task, later, [False] * 5), [expected[0], 1.0, 1.0, 0.0])


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        (slice(16, 19), [0.0, 0.0, -0.1], "below the floor"),
        (slice(19, 23), [0.0, 0.0, 0.0, 2.0], "quaternion"),
        (slice(14, 16), [0.2, -0.2], "fingers"),
    ],
)
def test_state_violations_name_the_problem(field, value, reason):
    s = state()
    s[field] = value
    assert any(reason in r for r in state_violations(s))
    assert state_violations(np.zeros(3)) and state_violations(np.full(44, np.nan))
