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


def test_actor_loss_and_its_gradients_are_torchrls_with_the_first_critic_alone():
    """Ours runs only Q₁ where TorchRL's TD3BCLoss.actor_loss runs both critics and keeps Q₁."""
    torch.manual_seed(0)
    module = TD3BC(CONTINUOUS, **SMALL)
    batch = InstructionBandit(CONTINUOUS).batch(32)
    results = []
    for actor_loss in (module.actor_loss, lambda rows: module.loss.actor_loss(rows)[:1]):
        module.zero_grad()
        loss = actor_loss(batch.clone())[0]
        loss.backward()
        gradients = [p.grad.clone() for p in module.loss.actor_network_params.values(True, True) if p.requires_grad]
        results.append((loss.detach(), gradients))
    (ours, our_gradients), (torchrls, their_gradients) = results
    torch.testing.assert_close(ours, torchrls)
    assert len(our_gradients) == len(their_gradients) > 0
    for mine, theirs in zip(our_gradients, their_gradients):
        torch.testing.assert_close(mine, theirs)
    assert all(p.grad is None for p in module.loss.qvalue_network_params.values(True, True))
