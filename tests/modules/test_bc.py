from modules.bc import BC
from tests.modules.synthetic import CONTINUOUS, DISCRETE, success_after_training


def test_discrete_bc_learns_an_action_that_depends_on_instruction_and_state():
    assert (
        success_after_training(BC, DISCRETE, max_steps=200) > 0.95
    )  # ignoring the instruction or the state caps it at 0.5


def test_continuous_bc_learns_a_state_and_instruction_dependent_action():
    assert success_after_training(BC, CONTINUOUS, max_steps=200) > 0.9  # ignoring the instruction's sign gives ≤ 0
