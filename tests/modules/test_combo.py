import lightning.pytorch as pl
import pytest
import torch

from modules.combo import COMBO
from modules.networks import observation
from tests.modules.synthetic import CONTINUOUS, DISCRETE, SMALL, InstructionBandit, fit

FAST = {"num_dynamics_models": 3, "num_action_samples": 4, "critic_lr": 1e-3, "dynamics_lr": 3e-3, **SMALL}


def trained(conservative_weight: float) -> tuple[COMBO, InstructionBandit]:
    """Zero reward everywhere: only the conservative term can separate data actions from others. Half of each
    batch of 64 stays real (the other half starts model rollouts), so the push-up sees 32 data rows an update."""
    pl.seed_everything(0, verbose=False)
    bandit = InstructionBandit(CONTINUOUS)

    def zero_reward_batch():
        batch = bandit.batch(64)
        batch["next", "reward"].zero_()
        return batch

    module = COMBO(CONTINUOUS, conservative_weight=conservative_weight, **FAST)
    fit(module, zero_reward_batch, max_steps=300)
    return module, bandit


def data_action_advantage(module: COMBO, bandit: InstructionBandit) -> float:
    """Mean ``Q(s, a_data) − Q(s, a_uniform)`` over fresh states."""
    state, embedding, task = bandit.observations(500)
    obs = torch.cat([state, embedding], -1)
    with torch.no_grad():
        q_data = module.critics(obs, bandit.expert_action(state, task)).mean(0)
        q_uniform = module.critics(obs, torch.rand(500, 2) * 2 - 1).mean(0)
    return float((q_data - q_uniform).mean())


def test_conservative_term_pushes_q_of_unseen_actions_below_data_actions_and_the_model_learns_rewards():
    module, bandit = trained(conservative_weight=5.0)
    advantage = data_action_advantage(module, bandit)
    assert advantage > 1.0
    rollout = module.model_rollout(bandit.batch(256))
    assert rollout["next", "reward"].abs().mean() < 0.2  # the ensemble learnt the data's zero reward
    assert not rollout["next", "terminated"].any()
    unconstrained, bandit = trained(conservative_weight=0.0)
    assert data_action_advantage(unconstrained, bandit) < advantage - 1.0


def test_model_rollout_steps_from_the_batch_states_with_policy_actions():
    torch.manual_seed(0)
    module = COMBO(CONTINUOUS, **FAST)
    batch = InstructionBandit(CONTINUOUS).batch(32)
    rollout = module.model_rollout(batch)
    torch.testing.assert_close(rollout["state"], batch["state"])
    torch.testing.assert_close(rollout["next", "instruction_embedding"], batch["instruction_embedding"])
    assert rollout["action"].abs().max() <= 1.0 and rollout["next", "state"].shape == batch["state"].shape
    losses = module.losses(batch)
    assert set(losses) == {"loss_qvalue", "loss_conservative", "loss_actor", "loss_alpha", "loss_dynamics"}
    assert all(value.shape == (32,) and torch.isfinite(value).all() for value in losses.values())


def test_a_rollout_runs_each_row_through_its_own_member_as_the_whole_ensemble_would():
    torch.manual_seed(0)
    module = COMBO(CONTINUOUS, **{**FAST, "num_dynamics_models": 5})
    batch = InstructionBandit(CONTINUOUS).batch(48)
    torch.manual_seed(1)
    rollout = module.model_rollout(batch)
    torch.manual_seed(1)  # the same draws, in the same order, through every member
    members = torch.randint(5, (48,))
    with torch.no_grad():
        action, _ = module.sample_actions(batch)
        mean, log_std = module.predict(observation(batch), action)
        expected = (mean + log_std.exp() * torch.randn_like(mean))[members, torch.arange(48)]
    assert len(members.unique()) == 5
    torch.testing.assert_close(rollout["action"], action)
    torch.testing.assert_close(rollout["next", "state"], batch["state"] + expected[:, :-1])
    torch.testing.assert_close(rollout["next", "reward"], expected[:, -1:])


def test_an_ensemble_member_left_without_rows_is_skipped():
    module = COMBO(CONTINUOUS, **FAST)
    batch = InstructionBandit(CONTINUOUS).batch(8)
    x, y = observation(batch), batch["action"]
    member_of_row = torch.tensor([0, 2, 2, 0, 0, 2, 0, 2])
    with torch.no_grad():
        expected = module.dynamics(x, y)[member_of_row, torch.arange(8)]
        torch.testing.assert_close(module.dynamics.one_member_per_row(x, y, member_of_row), expected)
        torch.testing.assert_close(module.dynamics.every_member_per_row(x, y, member_of_row), expected)


def test_bad_options_are_refused_with_clear_errors():
    with pytest.raises(ValueError, match="continuous actions"):
        COMBO(DISCRETE)
    for ratio in (0.0, 1.5):
        with pytest.raises(ValueError, match="real_data_ratio"):
            COMBO(CONTINUOUS, real_data_ratio=ratio)


def test_the_critics_batch_keeps_real_data_ratio_of_the_rows_and_rolls_out_from_the_others():
    """As the original code composes a batch: as many rows as the batch, ``real_data_ratio`` of them real."""
    torch.manual_seed(0)
    module = COMBO(CONTINUOUS, **{**FAST, "real_data_ratio": 0.25})
    batch = InstructionBandit(CONTINUOUS).batch(32)
    mixed, real_rows = module.compose(batch)
    assert mixed.shape == (32,) and real_rows.shape == (8,)
    for key in ("state", "action", ("next", "state"), ("next", "reward")):
        torch.testing.assert_close(mixed[key][:8], batch[key][real_rows])
    rollout_starts = sorted(set(range(32)) - set(real_rows.tolist()))
    torch.testing.assert_close(mixed["state"][8:].sort(0).values, batch["state"][rollout_starts].sort(0).values)
    assert not torch.equal(
        mixed["next", "state"][8:].sort(0).values, batch["next", "state"][rollout_starts].sort(0).values
    )
    all_real, _ = COMBO(CONTINUOUS, **{**FAST, "real_data_ratio": 1.0}).compose(batch)
    assert torch.equal(all_real["state"].sort(0).values, batch["state"].sort(0).values)
