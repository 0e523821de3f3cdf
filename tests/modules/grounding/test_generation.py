"""Decoding rollouts and explanations from a grounded model."""

from __future__ import annotations

import pytest
import torch

from modules.grounding.generation import explain_rollouts, imagine_rollouts, normalized, token_f1
from tests.grounding_fixtures import tiny_datamodule, tiny_module


@pytest.fixture(scope="module")
def model_and_rollouts(babyai_real):
    """A tiny model trained for a few steps, so its outputs vary with the input."""
    torch.manual_seed(0)
    datamodule = tiny_datamodule(babyai_real)
    module = tiny_module(datamodule, finetune="full")
    optimizer = torch.optim.Adam(module.parameters(), lr=3e-3)
    for examples in datamodule._batches(datamodule.train_rollouts, (0,), 10):
        optimizer.zero_grad()
        module.losses(module.on_before_batch_transfer(examples, 0))["total"].backward()
        optimizer.step()
    return module.eval(), datamodule.train_rollouts[:6]


def never(row: int, states: torch.Tensor) -> bool:
    return False


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_kv_cached_generation_equals_uncached_generation(model_and_rollouts, temperature):
    module, rollouts = model_and_rollouts
    instructions = [r.instruction for r in rollouts]  # different lengths: prompts are left-padded
    first = torch.stack([r.states[0] for r in rollouts])
    runs = [
        imagine_rollouts(
            module,
            instructions,
            first,
            never,
            horizon=6,
            temperature=temperature,
            generator=torch.Generator().manual_seed(7),
            use_cache=use_cache,
        )
        for use_cache in (True, False)
    ]
    assert torch.equal(runs[0].actions, runs[1].actions)
    torch.testing.assert_close(runs[0].states, runs[1].states, atol=1e-4, rtol=0)
    assert runs[0].actions.shape == (6, 6) and runs[0].states.shape == (6, 7, first.shape[1])
    torch.testing.assert_close(runs[0].states[:, 0], first)
    assert torch.equal(runs[0].states[:, 1:], runs[0].states[:, 1:].round())  # BabyAI states are whole numbers


def test_a_batched_rollout_equals_the_same_rollout_alone(model_and_rollouts):
    """Left padding must not change what a prompt generates."""
    module, rollouts = model_and_rollouts
    instructions = [r.instruction for r in rollouts]
    first = torch.stack([r.states[0] for r in rollouts])
    batched = imagine_rollouts(module, instructions, first, never, horizon=4)
    for row in (0, 3):
        alone = imagine_rollouts(module, instructions[row : row + 1], first[row : row + 1], never, horizon=4)
        assert torch.equal(alone.actions[0], batched.actions[row])
        torch.testing.assert_close(alone.states[0], batched.states[row], atol=1e-4, rtol=0)


def test_rollouts_stop_when_the_goal_check_holds_or_at_the_horizon(model_and_rollouts):
    module, rollouts = model_and_rollouts
    first = torch.stack([r.states[0] for r in rollouts[:3]])
    stop_at = {0: 2, 1: 5}  # row 2 never succeeds

    def goal_reached(row: int, states: torch.Tensor) -> bool:
        return len(states) - 1 >= stop_at.get(row, 99)

    batch = imagine_rollouts(module, [r.instruction for r in rollouts[:3]], first, goal_reached, horizon=4)
    assert batch.lengths.tolist() == [2, 4, 4]
    assert batch.success[0].tolist() == [False, False, True, False, False]
    assert not batch.success[1].any() and not batch.success[2].any()


def test_each_rollout_can_have_its_own_horizon(model_and_rollouts):
    module, rollouts = model_and_rollouts
    first = torch.stack([r.states[0] for r in rollouts[:3]])
    batch = imagine_rollouts(module, [r.instruction for r in rollouts[:3]], first, never, horizon=[2, 5, 3])
    assert batch.lengths.tolist() == [2, 5, 3] and batch.actions.shape[1] == 5


def test_explanations_are_text_and_stop_at_max_tokens(model_and_rollouts):
    module, rollouts = model_and_rollouts
    texts = explain_rollouts(module, [(r.states, r.actions) for r in rollouts[:3]], max_tokens=4)
    assert len(texts) == 3 and all(isinstance(t, str) and len(t.split()) <= 4 for t in texts)


def test_text_metrics():
    assert normalized("Go to the RED ball.") == "go to the red ball"
    assert token_f1("go to the red ball", "Go to the red ball.") == 1.0
    assert token_f1("pick up the key", "go to the red ball") == pytest.approx(2 * (1 / 4) * (1 / 5) / (1 / 4 + 1 / 5))
    assert token_f1("", "go") == 0.0
