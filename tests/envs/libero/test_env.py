"""The env on the LIBERO simulator (skipped without the extra): layout, determinism, actions,
the shared simulator, the expert and the success checks agreeing with it."""

import numpy as np
import pytest

from imaginebench.envs.libero import DOMAIN
from imaginebench.envs.libero.expert import LiberoExpert
from imaginebench.envs.libero.layout import EEF, STATE_DIM, position
from tests.envs.expert_episode import record_episode, run_expert


def test_without_the_extra_the_env_names_the_install_command():
    try:
        import libero.libero.envs  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match=r"pip install -e \.\[libero\]"):
            DOMAIN.env_factory(level="train", instructions=None, task=None)
    else:
        pytest.skip("the LIBERO extra is installed")


@pytest.fixture(scope="module")
def envs():
    pytest.importorskip("libero.libero.envs", reason="needs the LIBERO extra: pip install -e .[libero]")
    import imaginebench

    return imaginebench.make("Libero-v0", level="train"), imaginebench.make("Libero-v0", level="easy")


def test_reset_gives_the_44_number_state_deterministically(envs):
    train, _ = envs
    a, info = train.reset(seed=5, options={"task": "place-cheese"})
    b, _ = train.reset(seed=5, options={"task": "place-cheese"})
    assert a["state"].shape == (STATE_DIM,) and train.observation_space.contains(a)
    np.testing.assert_array_equal(a["state"], b["state"])
    assert info["task"] == "place-cheese" and not info["is_success"] and train.state_violations(a["state"]) == []
    # a place start has the open gripper around the object
    assert np.linalg.norm(a["state"][EEF] - position(a["state"], "cream_cheese")) < 0.05


def test_action_moves_the_hand_and_rejects_bad_input(envs):
    train, _ = envs
    obs, _ = train.reset(seed=0, options={"task": "pick-soup"})
    start = obs["state"][EEF].copy()
    for _ in range(8):
        obs, *_ = train.step(np.array([1.0, 0, 0, 0, 0, 0, -1.0], dtype=np.float32))
    moved = obs["state"][EEF] - start
    assert moved[0] > 0.03 and abs(moved[1]) < 0.01
    with pytest.raises(ValueError, match="7 finite numbers"):
        train.step(np.zeros(4))


def test_envs_sharing_the_simulator_do_not_disturb_each_other(envs):
    train, easy = envs
    push = np.array([0.0, 1.0, 0, 0, 0, 0, -1.0], dtype=np.float32)
    train.reset(seed=1, options={"task": "pick-dressing"})
    alone = [train.step(push)[0]["state"] for _ in range(3)]
    train.reset(seed=1, options={"task": "pick-dressing"})
    easy.reset(seed=2, options={"task": "reach-soup"})
    interleaved = []
    for _ in range(3):
        interleaved.append(train.step(push)[0]["state"])
        easy.step(-push)
    # MuJoCo keeps some solver state that a snapshot does not cover: repeats agree to a few millimetres
    positions = np.r_[7:10, 16:19, 23:26, 30:33, 37:40]  # hand and every entity
    np.testing.assert_allclose(np.stack(interleaved)[:, positions], np.stack(alone)[:, positions], atol=0.006)
    assert np.abs(np.stack(alone)[-1] - interleaved[0]).max() > 0.01  # the hand did move meanwhile


def test_an_episode_replays_bit_for_bit_whatever_ran_before_it(envs):
    """Observables sample on a timer robosuite resets only in its own reset: carried over from the last
    episode, its phase made the same start diverge by up to 3 cm within 50 expert steps."""
    train, easy = envs
    expert = LiberoExpert()

    def states(env, seed: int, task: str, steps: int) -> np.ndarray:
        env.reset(seed=seed, options={"task": task})
        return np.stack([env.step(expert(env))[0]["state"] for _ in range(steps)])

    first = states(train, 3, "pick-soup", 25)
    states(easy, 4, "pick-and-place-cheese", 37)
    np.testing.assert_array_equal(states(train, 3, "pick-soup", 25), first)


@pytest.mark.parametrize(("level", "task"), [("train", "pick-cheese"), ("easy", "pick-and-place-soup")])
def test_expert_succeeds_and_success_flags_agree(envs, level, task):
    env = envs[0] if level == "train" else envs[1]
    states, info = run_expert(DOMAIN, env, seed=0, task=task)
    assert info["is_success"] and len(states) < 300
    flags = env.success_flags(states)
    assert flags[-1] and not flags[:-1].any()


def test_imagined_rewards_recompute_an_expert_episodes_rewards_from_its_states(envs):
    _, easy = envs
    episode = record_episode(easy, DOMAIN.expert(), seed=1, task="pick-and-place-soup")
    success = easy.success_flags(episode.states)
    assert success[-1] and episode.rewards[-1] == 2.0
    rewards = easy.imagined_rewards(episode.states, episode.actions, success)
    np.testing.assert_allclose(rewards, episode.rewards, atol=1e-5)


def test_collected_data_record_the_clean_expert_action_of_each_state(envs, monkeypatch):
    """Collection executes the expert's action plus noise (DART) but records the expert's own action,
    which is a function of the recorded state: the data a behaviour-cloning learner copies."""
    import imaginebench.collect as collect
    from imaginebench.envs.libero.expert import expert_action
    from imaginebench.envs.libero.tasks import TASKS
    from imaginebench.instructions.encoder import DEFAULT_ENCODER

    executed, make = [], collect.make

    def recording_make(*args, **kwargs):
        env = make(*args, **kwargs)
        step = env.step
        env.step = lambda action: (executed.append(np.array(action)), step(action))[1]
        return env

    monkeypatch.setattr(collect, "make", recording_make)
    data = collect.run_expert_episodes("Libero-v0", "train", range(1), seed=0, encoder=DEFAULT_ENCODER, pooling="mean")
    steps = data.steps
    states, actions = steps["state"].double().numpy(), steps["action"].numpy()
    assert data.metadata["generator"]["action_noise"] == DOMAIN.collect_action_noise > 0
    stage = TASKS[data.metadata["tasks"][int(steps["task_id"][0])]].stages[0]
    relabelled = np.stack([expert_action(stage, s, states[0]) for s in states])
    np.testing.assert_allclose(relabelled, actions, atol=1e-4)
    noise = (np.stack(executed) - actions)[np.abs(np.stack(executed)) < 1.0]  # unclipped entries
    assert 0.5 * DOMAIN.collect_action_noise < noise.std() < 1.5 * DOMAIN.collect_action_noise
