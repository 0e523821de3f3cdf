"""Building simulators fast changes nothing they do: the compiled-scene copy and the stored distractor banks."""

import numpy as np
import pytest

from imaginebench.envs.metaworld import simulator
from imaginebench.envs.metaworld.distractors import ENTITIES, generate_bank, stored_banks
from imaginebench.envs.metaworld.tasks import TASKS


@pytest.mark.parametrize("task", ["push", "hammer", "locked-door-open"])
def test_a_sim_on_a_copied_scene_steps_exactly_as_one_compiled_anew(task, monkeypatch):
    copied = [simulator.build_sim(TASKS[task]) for _ in range(2)]  # the second copies the first one's scene
    monkeypatch.setattr(simulator, "compiling_scene_once", lambda env_class: env_class)
    compiled = simulator.build_sim(TASKS[task])
    sims = [compiled, *copied]
    assert type(compiled) is not type(copied[0]) and copied[0].model is not copied[1].model
    rng = np.random.default_rng(0)
    for sim in sims:
        sim.seed(3)
    trajectories = [[sim.reset()[0]] for sim in sims]
    for _ in range(40):
        action = rng.uniform(-1, 1, 4)
        for trajectory, sim in zip(trajectories, sims):
            trajectory.append(sim.step(action)[0])
    for trajectory in trajectories[1:]:
        np.testing.assert_array_equal(np.stack(trajectory), np.stack(trajectories[0]))


def test_stored_distractor_banks_are_what_the_generator_builds():
    banks = stored_banks()
    assert sorted(banks) == sorted(ENTITIES)
    for entity in ENTITIES:
        np.testing.assert_allclose(banks[entity], generate_bank(entity), rtol=0, atol=1e-9, err_msg=entity)
