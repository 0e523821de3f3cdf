import copy
import math

import lightning.pytorch as pl
import pytest
import torch
from tensordict import TensorDict, TensorDictBase
from tensordict import assert_allclose_td as assert_close
from torchrl.envs.utils import ExplorationType, set_exploration_type
from torchrl.modules.distributions.utils import rsample_and_log_prob
from torchrl.objectives import CQLLoss, ValueEstimators

from modules.cql import CQL
from modules.networks import action_spec, observation
from tests.modules.ensembles import critic_modules_like, ensemble_gradients, move_targets_apart, target_copy
from tests.modules.synthetic import CONTINUOUS, SMALL, InstructionBandit, fit


def test_continuous_cql_trains_with_finite_losses_and_soft_target_moves_by_tau():
    pl.seed_everything(0)
    bandit = InstructionBandit(CONTINUOUS)
    module = CQL(CONTINUOUS, gamma=0.9, tau=0.1, **SMALL)
    assert module.hparams.conservative_weight == 5.0 and module.hparams.target_update_interval == 0
    target_before = module.targets.target_critics_params.clone()

    fit(module, lambda: bandit.batch(16), max_steps=1)
    expected = target_before.apply(lambda old, new: 0.9 * old + 0.1 * new, module.targets.critics_params.data)
    assert_close(module.targets.target_critics_params, expected)

    fit(module, lambda: bandit.batch(16), max_steps=10)
    losses = module.losses(bandit.batch(16))
    assert all(value.shape == (16,) and torch.isfinite(value).all() for value in losses.values())


def test_continuous_penalty_is_per_state():
    """Each state's penalty depends on that state only (TorchRL 0.14.1's mixes all states' log-sum-exps)."""
    torch.manual_seed(0)
    module = CQL(CONTINUOUS, **SMALL)
    batch = InstructionBandit(CONTINUOUS).batch(8)
    changed = batch.clone()
    changed["state"][3] += 1.0

    def penalty(data: TensorDict) -> torch.Tensor:
        torch.manual_seed(1)  # the same uniform and policy proposals for both batches
        return module.losses(data.clone())["loss_cql"]

    before, after = penalty(batch), penalty(changed)
    assert before.shape == (8,)
    unchanged = torch.arange(8) != 3
    torch.testing.assert_close(after[unchanged], before[unchanged])
    assert not torch.isclose(after[3], before[3])


class PerStateCQLLoss(CQLLoss):
    """The reference: TorchRL's ``CQLLoss`` with the paper's conservative estimator per state (see
    :class:`~modules.cql.CQL`), as the project ran it before CQL was written on tensors. Its behaviour-cloning
    actor loss, which training never used, is left out, so that the random draws come in the same order."""

    def __init__(self, *args, action_bound: float = 1.0, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.action_bound = action_bound

    def actor_bc_loss(self, tensordict: TensorDictBase) -> tuple[torch.Tensor, dict]:
        return torch.zeros(()), {}

    def _policy_proposals(self, observation: TensorDictBase) -> tuple[torch.Tensor, torch.Tensor]:
        with set_exploration_type(ExplorationType.RANDOM), self.actor_network_params.data.to_module(self.actor_network):
            dist = self.actor_network.get_dist(observation.select(*self.actor_network.in_keys, strict=False).copy())
            return rsample_and_log_prob(dist, (self.num_random,))

    def cql_loss(self, tensordict: TensorDictBase) -> tuple[torch.Tensor, dict]:
        pred_q = torch.cat([tensordict.get(key) for key in (self.tensor_keys.pred_q1, self.tensor_keys.pred_q2)], -1).T
        with torch.no_grad():
            current_action, current_log_prob = self._policy_proposals(tensordict)
            next_action, next_log_prob = self._policy_proposals(tensordict.get("next"))
        random_action = torch.empty_like(current_action).uniform_(-self.action_bound, self.action_bound)
        random_log_density = torch.full_like(
            current_log_prob, -current_action.shape[-1] * math.log(2 * self.action_bound)
        )
        actions = torch.cat([random_action, current_action, next_action])  # (3N, B, A)
        obs, critic = observation(tensordict), self.qvalue_network[-1].module
        q_per_critic = []
        for index in range(self.num_qvalue_nets):
            with self.qvalue_network_params[index].to_module(self.qvalue_network):
                q_per_critic.append(critic(obs, actions).squeeze(-1))
        log_density = torch.cat([random_log_density, current_log_prob, next_log_prob])
        logsumexp = torch.logsumexp(torch.stack(q_per_critic) - log_density, dim=1)  # (2, B)
        return self._reduce_loss((logsumexp - pred_q).sum(0), tensordict=tensordict), {}


def torchrl_reference(module: CQL) -> PerStateCQLLoss:
    """The reference loss with the module's online and target weights (targets moved apart first) and α."""
    move_targets_apart(module.targets.target_critics_params)
    with torch.no_grad():
        module.log_alpha.fill_(-0.7)  # α ≠ 1, so that a loss leaving it out differs
    target_critics = critic_modules_like(target_copy(module.targets, "critics"))
    loss = PerStateCQLLoss(
        copy.deepcopy(module.actor), target_critics, action_spec=action_spec(module.env_spec), loss_function="l2",
        min_q_weight=1.0, num_random=module.hparams.num_action_samples, action_bound=module.env_spec.action_bound,
    )  # fmt: skip
    loss.make_value_estimator(ValueEstimators.TD0, gamma=module.hparams.gamma)
    loss.qvalue_network_params.data.update_(TensorDict.from_modules(*critic_modules_like(module.critics)).data)
    loss.actor_network_params.data.update_(TensorDict.from_module(module.actor).data)
    with torch.no_grad():
        loss.log_alpha.copy_(module.log_alpha)
    return loss


def test_losses_and_gradients_are_torchrls_cql_loss_with_the_per_state_penalty():
    torch.manual_seed(0)
    module = CQL(CONTINUOUS, num_action_samples=4, **SMALL)
    reference = torchrl_reference(module)
    batch = InstructionBandit(CONTINUOUS).batch(32)
    batch["next", "terminated"][::2] = False  # the bandit ends every episode: bootstrap half the rows
    torch.manual_seed(1)
    ours = module.losses(batch.clone())
    torch.manual_seed(1)
    theirs_batch = batch.clone()
    theirs = reference(theirs_batch)
    for name in ("loss_qvalue", "loss_cql", "loss_actor", "loss_alpha"):
        torch.testing.assert_close(ours[name].mean(), theirs[name], msg=name)
    torch.testing.assert_close(ours["td_error"], theirs_batch["td_error"])
    sum(ours[name].mean() for name in ours if name.startswith("loss")).backward()
    sum(theirs[name] for name in theirs.keys() if name.startswith("loss") and theirs[name].requires_grad).backward()
    critic_gradients = reference.qvalue_network_params.grad
    for index in range(2):
        expected = list(critic_gradients[index].flatten_keys(".").values())
        torch.testing.assert_close(ensemble_gradients(module.critics, index), expected)
    torch.testing.assert_close(
        [p.grad for p in module.actor.parameters()],
        list(reference.actor_network_params.grad.flatten_keys(".").values()),
    )
    torch.testing.assert_close(module.log_alpha.grad, reference.log_alpha.grad)


def test_the_action_distribution_is_the_actors():
    torch.manual_seed(0)
    module = CQL(CONTINUOUS, **SMALL)
    batch = InstructionBandit(CONTINUOUS).batch(16)
    theirs = module.actor.get_dist(batch.select("state", "instruction_embedding"))
    ours = module.action_distribution(observation(batch))
    drawn = []
    for distribution in (theirs, ours):
        torch.manual_seed(1)
        drawn.append(distribution.rsample_and_log_prob((3,)))
    torch.testing.assert_close(drawn[1], drawn[0])
    torch.testing.assert_close(module.env_spec.action_bound * ours.loc.tanh(), theirs.deterministic_sample)


def test_discrete_actions_are_refused_with_a_clear_error():
    from tests.modules.synthetic import DISCRETE

    with pytest.raises(ValueError, match="DiscreteCQL"):
        CQL(DISCRETE)
