"""Decoding rollouts and explanations from a grounded model."""

from __future__ import annotations

import pytest
import torch

from datamodules.grounding_prompts import ACTION, STATE, TEXT
from imaginebench.errors import UserInputError
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


def imagine_six(module, use_cache: bool = True, horizon: int | list[int] = 11, **options):
    """Sampled rollouts of the six fixture goals (a fixed generator), so decoding differences show."""
    module, rollouts = module
    first = torch.stack([r.states[0] for r in rollouts])
    generator = torch.Generator().manual_seed(3)
    return imagine_rollouts(
        module, [r.instruction for r in rollouts], first, never, horizon, 1.0, generator, use_cache, **options
    )


@pytest.mark.parametrize("use_cache", [True, False])
def test_a_window_as_long_as_the_horizon_changes_nothing(model_and_rollouts, use_cache):
    whole = imagine_six(model_and_rollouts, use_cache, horizon=[5, 11, 8, 11, 3, 9])
    for window in (11, 40):
        windowed = imagine_six(model_and_rollouts, use_cache, horizon=[5, 11, 8, 11, 3, 9], window_steps=window)
        for name in ("states", "actions", "success", "lengths"):
            assert torch.equal(getattr(windowed, name), getattr(whole, name)), (window, name)


class DecodeSpy:
    """Records what each call of ``module.decode`` and each prompt ``module.embed`` is given."""

    def __init__(self, module, monkeypatch):
        self.mask_lengths: list[int] = []
        self.prompts: list[dict[str, torch.Tensor]] = []
        decode, embed = module.decode, module.embed

        def spied_decode(embeddings, attention_mask, *args, **kwargs):
            self.mask_lengths.append(attention_mask.shape[1])
            return decode(embeddings, attention_mask, *args, **kwargs)

        def spied_embed(batch):
            if bool((batch["kinds"] == TEXT).any()):  # a prompt, not a slot fed on its own
                self.prompts.append(batch)
            return embed(batch)

        monkeypatch.setattr(module, "decode", spied_decode)
        monkeypatch.setattr(module, "embed", spied_embed)


@pytest.mark.parametrize("use_cache", [True, False])
def test_windowed_generation_is_full_rate_and_reads_at_most_the_prompt_and_the_window(
    model_and_rollouts, monkeypatch, use_cache
):
    module, rollouts = model_and_rollouts
    prompts = [module.builder.generation_prompt(r.instruction, r.states[0]) for r in rollouts]
    prompt_length = module.builder.collate(prompts, pad_left=True)["token_ids"].shape[1]
    whole = imagine_six(model_and_rollouts, use_cache)
    spy = DecodeSpy(module, monkeypatch)
    windowed = imagine_six(model_and_rollouts, use_cache, window_steps=4)
    assert windowed.actions.shape == (6, 11) and windowed.states.shape == whole.states.shape
    assert windowed.lengths.tolist() == [11] * 6
    assert max(spy.mask_lengths) == prompt_length + 2 * 4  # one state and one action slot per step of the window
    assert torch.equal(windowed.actions[:, :4], whole.actions[:, :4])  # the same context until the first restart
    # Restarts after steps 4, 6, 8 and 10 re-read the goal and the latest two generated steps, as a window begins.
    assert len(spy.prompts) == 5
    for restart, step in zip(spy.prompts[1:], (4, 6, 8, 10)):
        mask = restart["attention_mask"].bool()
        for row in range(6):
            kinds = restart["kinds"][row][mask[row]]
            torch.testing.assert_close(
                restart["states"][row][mask[row]][kinds == STATE], windowed.states[row, step - 2 : step + 1]
            )
            assert torch.equal(
                restart["actions"][row][mask[row]][kinds == ACTION], windowed.actions[row, step - 2 : step]
            )


def test_cached_and_uncached_windowed_generation_agree(model_and_rollouts):
    cached, uncached = (imagine_six(model_and_rollouts, use_cache, window_steps=3) for use_cache in (True, False))
    assert torch.equal(cached.actions, uncached.actions)
    torch.testing.assert_close(cached.states, uncached.states, atol=1e-4, rtol=0)


def test_generation_slides_by_the_window_the_model_was_grounded_on(model_and_rollouts, monkeypatch):
    module, _ = model_and_rollouts
    monkeypatch.setitem(module.hparams, "window_steps", 4)
    assert torch.equal(imagine_six(model_and_rollouts).actions, imagine_six(model_and_rollouts, window_steps=4).actions)
    spy = DecodeSpy(module, monkeypatch)
    imagine_six(model_and_rollouts, window_steps=2)  # an explicit window overrides the model's
    assert len(spy.prompts) == 1 + 9  # steps 2 to 10 each restart a window of 2 that keeps 1


@pytest.mark.parametrize("window_steps", [0, -3])
def test_a_window_of_no_steps_is_an_error_naming_the_option(model_and_rollouts, window_steps):
    with pytest.raises(UserInputError, match=rf"^window_steps must be >= 1, got {window_steps}$"):
        imagine_six(model_and_rollouts, window_steps=window_steps)


def test_dynamics_next_states_are_what_the_dynamics_task_predicts_and_ignore_the_goal(model_and_rollouts):
    """``next_states="dynamics"``: each s_{t+1} is read where the dynamics-prediction task supervises it, in the
    goal-free ``(s_t, a_t)`` prompt; the actions still come from the goal's rollout."""
    module, _ = model_and_rollouts
    rollout = imagine_six(model_and_rollouts, horizon=5)
    dynamics = imagine_six(model_and_rollouts, horizon=5, next_states="dynamics")
    assert torch.equal(dynamics.actions[:, 0], rollout.actions[:, 0])  # same prefix, same draw
    assert not torch.equal(dynamics.states, rollout.states)  # the two reads differ for this model
    for row in range(6):
        for t in range(5):
            state, action = dynamics.states[row, t], dynamics.actions[row, t]
            training = module.builder.collate([module.builder.dynamics(state, action, torch.zeros_like(state))])
            target = int(training["supervised"][0].nonzero()[-1])  # the next-state slot the task trains
            hidden = module.decode(module.embed(training), training["attention_mask"]).last_hidden_state
            expected = module.predict_state(hidden[:, target - 1], state[None])[0]
            assert torch.equal(dynamics.states[row, t + 1], expected), (row, t)


def test_an_unknown_next_state_source_is_an_error(model_and_rollouts):
    with pytest.raises(ValueError, match="next_states"):
        imagine_six(model_and_rollouts, horizon=2, next_states="simulator")
