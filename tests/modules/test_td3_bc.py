import lightning.pytorch as pl
import pytest
import torch

from modules.td3_bc import TD3BC
from tests.modules.synthetic import CONTINUOUS, DISCRETE, SMALL, InstructionBandit, fit, success_after_training


def test_td3_bc_solves_the_bandit():
    assert success_after_training(TD3BC, CONTINUOUS, max_steps=400) > 0.6  # ignoring the instruction's sign gives ≤ 0


class Snapshots(pl.Callback):
    def __init__(self) -> None:
        self.after_step: list[tuple] = []

    def on_train_batch_end(self, trainer, module, *args) -> None:
        loss = module.loss
        self.after_step.append(
            tuple(
                p.clone()
                for p in (loss.actor_network_params, loss.target_qvalue_network_params, loss.qvalue_network_params)
            )
        )


def test_actor_and_targets_move_only_every_actor_update_interval():
    pl.seed_everything(0)
    bandit = InstructionBandit(CONTINUOUS)
    module = TD3BC(CONTINUOUS, actor_update_interval=3, **SMALL)
    initial = (module.loss.actor_network_params.clone(), module.loss.target_qvalue_network_params.clone())
    snapshots = Snapshots()
    fit(module, lambda: bandit.batch(16), max_steps=3, callbacks=[snapshots])
    (actor1, target1, critic1), (actor2, target2, critic2), (actor3, target3, _) = snapshots.after_step
    assert (actor1 == initial[0]).all() and (actor2 == initial[0]).all()  # updates 1 and 2: critics only
    assert (target1 == initial[1]).all() and (target2 == initial[1]).all()
    assert not (critic1 == critic2).all()
    assert not (actor2 == actor3).all() and not (target2 == target3).all()  # update 3: actor and targets


def test_actor_loss_is_the_behaviour_term_when_q_is_ignored():
    torch.manual_seed(0)
    module = TD3BC(CONTINUOUS, alpha=0.0, **SMALL)
    batch = InstructionBandit(CONTINUOUS).batch(32)
    loss, metrics = module.actor_loss(batch)
    with torch.no_grad():
        policy_action = module.actor(batch.select("state", "instruction_embedding"))["action"]
    torch.testing.assert_close(loss, (policy_action - batch["action"]).pow(2).mean())
    torch.testing.assert_close(metrics["loss_bc"], loss.detach())


def test_discrete_actions_are_refused_with_a_clear_error():
    with pytest.raises(ValueError, match="continuous actions"):
        TD3BC(DISCRETE)
