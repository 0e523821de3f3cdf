"""The env on gymnasium's HalfCheetah-v5: state layout, determinism, legality, phrasings, experts."""

import numpy as np
import pytest

pytest.importorskip("mujoco")

import imaginebench  # noqa: E402
from imaginebench.envs.halfcheetah import DOMAIN, EXPERT_DIR  # noqa: E402
from imaginebench.envs.halfcheetah.layout import DX, JOINT_RANGES, JOINTS, STATE_DIM, VX, state_violations  # noqa: E402  # noqa: E402
from imaginebench.envs.halfcheetah.phrasings import PHRASINGS  # noqa: E402
from imaginebench.envs.halfcheetah.simulator import Cheetah  # noqa: E402


@pytest.fixture(scope="module")
def env():
    env = imaginebench.make("Mujoco-v0", level="train")
    yield env
    env.close()


def test_reset_state_has_zero_displacement_and_steps_record_the_move(env):
    obs, info = env.reset(seed=1, options={"task": "run-forward"})
    assert obs["state"].shape == (STATE_DIM,) and obs["state"].dtype == np.float32
    assert obs["state"][DX] == 0.0 and env.observation_space.contains(obs)
    assert info == {"is_success": False, "task": "run-forward", "instruction": env.instruction}
    x = float(env.cheetah.package.data.qpos[0])
    obs, *_ = env.step(np.full(6, 0.5, dtype=np.float32))
    assert obs["state"][DX] == pytest.approx(float(env.cheetah.package.data.qpos[0]) - x, abs=1e-6)


def test_same_seed_same_episode(env):
    rng = np.random.default_rng(0)
    actions = rng.uniform(-1, 1, (20, 6))
    runs = []
    for _ in range(2):
        obs, _ = env.reset(seed=7)
        runs.append([obs["state"]] + [env.step(a)[0]["state"] for a in actions])
    np.testing.assert_array_equal(np.array(runs[0]), np.array(runs[1]))


def test_bad_actions_are_refused(env):
    env.reset(seed=0)
    with pytest.raises(ValueError, match="6 finite"):
        env.step(np.array([np.nan] * 6))


def test_joint_ranges_are_the_models():
    np.testing.assert_allclose(JOINT_RANGES, Cheetah().joint_ranges())


def test_legality_accepts_real_states_and_names_impossible_ones(env):
    env.reset(seed=2)
    rng = np.random.default_rng(2)
    states = [env.step(rng.uniform(-1, 1, 6))[0]["state"] for _ in range(100)]
    assert not any(state_violations(s) for s in states)
    bent = states[-1].copy()
    bent[JOINTS.start] = JOINT_RANGES[0, 1] + 1.0
    assert any("joint 0" in reason for reason in state_violations(bent))
    fast = states[-1].copy()
    fast[VX] = 1e3
    assert any("velocity 0" in reason for reason in state_violations(fast))
    assert state_violations(np.full(STATE_DIM, np.nan)) == ["state has non-finite numbers"]
    assert env.success_flags(np.array([bent])).tolist() == [False]


def test_phrasings_name_their_task_and_rephrase_is_unseen():
    train = {text for texts in PHRASINGS["train"].values() for text in texts}
    rephrase = {text for texts in PHRASINGS["rephrase"].values() for text in texts}
    assert not train & rephrase
    for level, tasks in DOMAIN.tasks.items():
        assert set(PHRASINGS[level]) == set(tasks), level
    for task, texts in PHRASINGS["train"].items():
        assert len(texts) >= 10 and len(PHRASINGS["rephrase"][task]) >= 10
        word = task.split("-")[0]  # run / jump
        assert all(
            ("jump" in t.lower() or "hop" in t.lower() or "leap" in t.lower() or "bound" in t.lower())
            == (word == "jump")
            for t in texts
        ), task


@pytest.mark.skipif(not (EXPERT_DIR / "jumps.pt").is_file(), reason="shipped experts missing")
@pytest.mark.parametrize(
    "level, task", [("train", "run-forward"), ("train", "jump-backward"), ("hard", "backward-then-forward")]
)
def test_expert_solves_tasks_and_success_flags_agree(level, task):
    env = imaginebench.make("Mujoco-v0", level=level)
    expert = DOMAIN.expert()
    env.reset(seed=0, options={"task": task})
    done = False
    while not done:
        _, _, terminated, truncated, info = env.step(expert(env))
        done = terminated or truncated
    assert info["is_success"]
    flags = env.success_flags(env.states())
    assert flags[-1] and not flags[:-1].any()


def _episode_rewards(env, policy) -> tuple[list[float], bool]:
    rewards, done = [], False
    while not done:
        _, reward, terminated, truncated, info = env.step(policy(env))
        rewards.append(reward)
        done = terminated or truncated
    return rewards, info["is_success"]


@pytest.mark.skipif(not (EXPERT_DIR / "jumps.pt").is_file(), reason="shipped experts missing")
@pytest.mark.parametrize("level, task", [("train", "jump-backward"), ("easy", "run-forward-faster")])
def test_no_step_pays_more_than_success(level, task):
    """Success ends the episode, so a step before it must not pay more than 0: with the task rewards alone
    (positive on both tasks) TD3+BC learned to jump backward for 200 steps without success, for a return of 480
    against the expert's 100 in 90 steps."""
    env = imaginebench.make("Mujoco-v0", level=level, task=task)
    expert = DOMAIN.expert()
    env.reset(seed=0)
    solved, success = _episode_rewards(env, expert)
    env.reset(seed=0)
    still, _ = _episode_rewards(env, lambda env: np.zeros(6))
    env.close()
    assert success and len(still) == 200
    assert max(solved) <= 0 and max(still) <= 0
    assert sum(solved) > sum(still)


class _History:
    """What the expert reads of an env: the task and the states since the episode's start."""

    def __init__(self, task: str, states: list[np.ndarray]):
        self.task, self._states = task, np.asarray(states)

    def states(self) -> np.ndarray:
        return self._states


@pytest.mark.skipif(not (EXPERT_DIR / "jumps.pt").is_file(), reason="shipped experts missing")
@pytest.mark.parametrize(
    "level, task", [("train", "jump-forward"), ("train", "jump-backward"), ("hard", "jump-in-place")]
)
def test_jump_experts_act_on_the_latest_state_alone(level, task):
    """Behaviour cloning learns state → action, so the jump data must be such a map: every state of an
    expert episode gives its action again to a fresh expert that sees it alone, or after a history 3 m
    away from the start (the position, which the state leaves out, and any latch play no part). The
    earlier experts (a 1.5 m run-up, a latch for jump-in-place) fail this on all three tasks."""
    env = imaginebench.make("Mujoco-v0", level=level, task=task)
    expert = DOMAIN.expert()
    env.reset(seed=0)
    played, done = [], False
    while not done:
        action = expert(env)
        played.append((env.states()[-1], action))
        _, _, terminated, truncated, _ = env.step(action)
        done = terminated or truncated
    env.close()
    away = np.zeros((31, STATE_DIM))
    away[1:, DX] = -0.1 if task == "jump-forward" else 0.1
    for state, action in played:
        for history in ([state], [*away, state]):
            np.testing.assert_array_equal(DOMAIN.expert()(_History(task, history)), action)


def test_a_step_from_a_set_state_does_not_depend_on_the_root_x(env):
    """The vector leaves out the root x; two simulators far apart in x, set to one state, make
    the same step, and the set state replaces the episode's latest one."""
    rng = np.random.default_rng(3)
    env.reset(seed=3)
    state = [env.step(rng.uniform(-1, 1, 6))[0]["state"] for _ in range(20)][-1]
    action = rng.uniform(-1, 1, 6)
    far = imaginebench.make("Mujoco-v0", level="train")
    far.reset(seed=4)
    far.cheetah.package.data.qpos[0] += 50.0
    results = []
    for e in (env, far):
        e.set_state(state)
        np.testing.assert_array_equal(e.states()[-1].astype(np.float32), state)
        results.append(e.step(action)[0]["state"])
    np.testing.assert_allclose(results[0], results[1], atol=1e-9)
    assert abs(far.cheetah.package.data.qpos[0]) > 40.0
    far.close()
