"""Token/slot sequences of the four grounding tasks and their loss masks."""

from __future__ import annotations

import pytest
import torch

from datamodules.grounding_prompts import (
    ACTION,
    PROMPT_WORDS,
    STATE,
    TEXT,
    Example,
    SequenceBuilder,
    end_of_text_id,
    words,
)
from modules.grounding.backbone import word_level_tokenizer


@pytest.fixture(scope="module")
def builder() -> SequenceBuilder:
    vocabulary = words(PROMPT_WORDS + " go to the red ball pick up key open door put next box grey in room")
    return SequenceBuilder(word_level_tokenizer(vocabulary), state_dim=3, discrete_actions=True)


def rollout(steps: int = 3) -> tuple[torch.Tensor, torch.Tensor]:
    states = torch.arange((steps + 1) * 3, dtype=torch.float32).reshape(steps + 1, 3)
    return states, torch.arange(steps) % 7


def slots(sequence, kind: int) -> list[int]:
    return [i for i, k in enumerate(sequence.kinds.tolist()) if k == kind]


def test_generation_alternates_states_and_actions_and_supervises_all_but_the_first_state(builder):
    states, actions = rollout(3)
    sequence = builder.generation("go to the red ball", states, actions)
    state_slots, action_slots = slots(sequence, STATE), slots(sequence, ACTION)
    assert len(state_slots) == 4 and len(action_slots) == 3
    assert [k for k in sequence.kinds.tolist() if k != TEXT] == [STATE, ACTION, STATE, ACTION, STATE, ACTION, STATE]
    assert state_slots[0] > 0 and all(
        k == TEXT for k in sequence.kinds[: state_slots[0]].tolist()
    )  # the instruction comes first
    torch.testing.assert_close(sequence.states[state_slots], states)
    assert sequence.actions[action_slots].tolist() == actions.tolist()
    supervised = set(torch.nonzero(sequence.supervised).flatten().tolist())
    assert supervised == set(state_slots[1:]) | set(action_slots)


def test_generation_prompt_is_the_prefix_of_the_training_sequence(builder):
    states, actions = rollout(2)
    prompt = builder.generation_prompt("pick up the key", states[0])
    sequence = builder.generation("pick up the key", states, actions)
    assert torch.equal(sequence.token_ids[: len(prompt)], prompt.token_ids)
    assert torch.equal(sequence.kinds[: len(prompt)], prompt.kinds)
    assert not prompt.supervised.any()


def test_dynamics_supervises_only_the_next_state(builder):
    states, actions = rollout(3)
    sequence = builder.build(Example("dynamics", "ignored", states, actions, step=1))
    supervised = torch.nonzero(sequence.supervised).flatten().tolist()
    assert supervised == [slots(sequence, STATE)[-1]]
    torch.testing.assert_close(sequence.states[supervised[0]], states[2])
    torch.testing.assert_close(sequence.states[slots(sequence, STATE)[0]], states[1])
    assert sequence.actions[slots(sequence, ACTION)].tolist() == [int(actions[1])]


def test_consequence_supervises_the_final_state_given_the_first(builder):
    states, actions = rollout(4)
    sequence = builder.build(Example("consequence", "open the door", states, actions))
    first, final = slots(sequence, STATE)
    assert torch.nonzero(sequence.supervised).flatten().tolist() == [final]
    torch.testing.assert_close(sequence.states[first], states[0])
    torch.testing.assert_close(sequence.states[final], states[-1])


def test_explanation_supervises_the_instruction_tokens_and_the_end_token(builder):
    states, actions = rollout(2)
    instruction = "put the ball next to the box"
    sequence = builder.build(Example("explanation", instruction, states, actions))
    supervised = torch.nonzero(sequence.supervised).flatten().tolist()
    expected = list(builder.tokenize(instruction)) + [end_of_text_id(builder.tokenizer)]
    assert sequence.token_ids[supervised].tolist() == expected
    assert supervised == list(range(len(sequence) - len(expected), len(sequence)))  # the text comes after the rollout
    assert len(slots(sequence, STATE)) == 3 and len(slots(sequence, ACTION)) == 2


def test_unknown_task_is_an_error_naming_the_valid_ones(builder):
    states, actions = rollout(1)
    with pytest.raises(ValueError, match="explanation"):
        builder.build(Example("summarise", "x", states, actions))


@pytest.mark.parametrize("pad_left", [False, True])
def test_collate_pads_without_supervising_padding(builder, pad_left):
    states, actions = rollout(1)
    short = builder.dynamics(states[0], actions[0], states[1])
    long = builder.generation("go to the grey box in the room", *rollout(3))
    batch = builder.collate([short, long], pad_left=pad_left)
    assert batch["token_ids"].shape == (2, len(long))
    mask = batch["attention_mask"][0].bool()
    assert int(mask.sum()) == len(short)
    assert bool(mask[-1]) if pad_left else bool(mask[0])
    assert not (batch["supervised"][0] & ~mask).any()
    torch.testing.assert_close(batch["states"][0][mask], short.states)
