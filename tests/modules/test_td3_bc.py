import lightning.pytorch as pl
import pytest
import torch
from tensordict import TensorDict
from torchrl.objectives import TD3BCLoss, ValueEstimators

from modules.networks import action_spec
from modules.td3_bc import TD3BC
from tests.modules.ensembles import critic_modules_like, ensemble_gradients, move_targets_apart, target_copy
from tests.modules.synthetic import CONTINUOUS, DISCRETE, SMALL, InstructionBandit, fit, success_after_training


def test_td3_bc_solves_the_bandit():
    assert success_after_training(TD3BC, CONTINUOUS, max_steps=400) > 0.6  # ignoring the instruction's sign gives ≤ 0


def flat(parameters) -> torch.Tensor:
    return torch.cat([p.detach().flatten() for p in parameters])


class Snapshots(pl.Callback):
    def __init__(self) -> None:
        self.after_step: list[tuple] = []

    def on_train_batch_end(self, trainer, module, *args) -> None:
        targets = module.targets
        self.after_step.append(
            (flat(module.actor.parameters()), targets.target_critics_params.clone(), flat(module.critics.parameters()))
        )


def test_actor_and_targets_move_only_every_actor_update_interval():
    pl.seed_everything(0)
    bandit = InstructionBandit(CONTINUOUS)
    module = TD3BC(CONTINUOUS, actor_update_interval=3, **SMALL)
    initial = (flat(module.actor.parameters()), module.targets.target_critics_params.clone())
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


def torchrl_reference(module: TD3BC) -> TD3BCLoss:
    """TorchRL's ``TD3BCLoss`` with the module's online and target weights (targets moved apart first)."""
    move_targets_apart(module.targets.target_actor_params, module.targets.target_critics_params)
    target_actor = target_copy(module.targets, "actor")
    target_critics = critic_modules_like(target_copy(module.targets, "critics"))
    bound = module.env_spec.action_bound
    loss = TD3BCLoss(
        target_actor, target_critics, action_spec=action_spec(module.env_spec), alpha=2.5, loss_function="l2",
        policy_noise=0.2 * bound, noise_clip=0.5 * bound,
    )  # fmt: skip
    loss.make_value_estimator(ValueEstimators.TD0, gamma=0.99)
    loss.qvalue_network_params.data.update_(TensorDict.from_modules(*critic_modules_like(module.critics)).data)
    loss.actor_network_params.data.update_(TensorDict.from_module(module.actor).data)
    return loss


def test_critic_and_actor_losses_and_gradients_are_torchrls_td3bc_loss():
    """Ours runs only Q₁ in the actor loss where TorchRL's runs both critics and keeps Q₁."""
    torch.manual_seed(0)
    module = TD3BC(CONTINUOUS, **SMALL)
    reference = torchrl_reference(module)
    batch = InstructionBandit(CONTINUOUS).batch(32)
    batch["next", "terminated"][::2] = False  # the bandit ends every episode: bootstrap half the rows
    torch.manual_seed(1)
    ours, td_error = module.critic_loss(batch.clone())
    torch.manual_seed(1)
    theirs, metadata = reference.qvalue_loss(batch.clone())
    torch.testing.assert_close(ours, theirs)
    torch.testing.assert_close(td_error, metadata["td_error"])
    ours.backward()
    theirs.backward()
    their_gradients = reference.qvalue_network_params.grad
    for index in range(2):
        mine = ensemble_gradients(module.critics, index)
        torch.testing.assert_close(mine, list(their_gradients[index].flatten_keys(".").values()))
    module.zero_grad()
    reference.zero_grad()
    ours, theirs = module.actor_loss(batch.clone())[0], reference.actor_loss(batch.clone())[0]
    torch.testing.assert_close(ours, theirs)
    ours.backward()
    theirs.backward()
    torch.testing.assert_close(
        [p.grad for p in module.actor.parameters()],
        list(reference.actor_network_params.grad.flatten_keys(".").values()),
    )
    assert all(p.grad is None for p in module.critics.parameters())
