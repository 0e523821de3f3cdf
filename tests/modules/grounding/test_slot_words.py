"""Slot words: grid-state values and actions start from the backbone's embeddings of the words naming them."""

from __future__ import annotations

import math

import pytest
import torch

from imaginebench.envs.babyai.layout import DOOR_LOCKED, STATE_INDEX, TOGGLE
from imaginebench.envs.slot_words import SLOT_WORDS, get_slot_words
from modules.grounding.slot_words import phrase_embeddings
from tests.grounding_fixtures import tiny_datamodule, tiny_module

VALUES = 15


def test_babyai_names_each_value_where_the_state_vector_puts_it():
    words = SLOT_WORDS["babyai"]
    assert words.state[STATE_INDEX["door_state"]][DOOR_LOCKED] == "locked door"
    assert words.state[STATE_INDEX["key_color"]][4] == "yellow key"
    assert words.state[STATE_INDEX["carry_type"]][5] == "carrying key"
    assert words.state[STATE_INDEX["ball_row"]][0] == "ball carried"
    assert words.actions[TOGGLE] == "open"


def test_a_state_value_and_an_action_start_from_their_words(babyai_real):
    datamodule = tiny_datamodule(babyai_real)
    torch.manual_seed(0)
    module = tiny_module(datamodule, state_values=VALUES, slot_words="babyai")
    torch.manual_seed(0)
    plain = tiny_module(datamodule, state_values=VALUES)
    embedding, table = module.lm.get_input_embeddings(), module.state_projection.table.weight
    locked = STATE_INDEX["door_state"] * VALUES + DOOR_LOCKED
    expected = phrase_embeddings(["locked door"], module.tokenizer, embedding)[0]
    torch.testing.assert_close(table[locked] / table[locked].norm(), expected / expected.norm())
    token_norm = embedding.weight.norm(dim=-1).median()
    torch.testing.assert_close(table[locked].norm(), token_norm / math.sqrt(len(SLOT_WORDS["babyai"].state)))
    assert not torch.allclose(table[locked], plain.state_projection.table.weight[locked])
    actions = module.action_projection.weight
    expected = phrase_embeddings(["open"], module.tokenizer, embedding)[0]
    torch.testing.assert_close(actions[TOGGLE] / actions[TOGGLE].norm(), expected / expected.norm())
    unnamed = STATE_INDEX["door_state"] * VALUES + DOOR_LOCKED + 1  # door_state has 3 values: the rest stay random
    torch.testing.assert_close(table[unnamed], plain.state_projection.table.weight[unnamed])


def test_values_sharing_a_word_start_closer_than_values_that_do_not(babyai_real):
    module = tiny_module(tiny_datamodule(babyai_real), state_values=VALUES, slot_words="babyai")
    table = module.state_projection.table.weight
    row = lambda field, value: table[STATE_INDEX[field] * VALUES + value]  # noqa: E731
    same_colour = torch.cosine_similarity(row("key_color", 4), row("box_color", 4), dim=0)
    other_colour = torch.cosine_similarity(row("key_color", 4), row("box_color", 0), dim=0)
    assert same_colour > other_colour  # "yellow key" and "yellow box" share "yellow"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"slot_words": "nope"}, "model.slot_words: unknown slot words 'nope'; known: babyai"),
        ({"slot_words": "babyai", "state_values": 0}, "slot_words names the values of a whole-number state"),
    ],
)
def test_bad_slot_words_fail_with_one_line_naming_the_option(babyai_real, options, message):
    with pytest.raises(ValueError, match=message):
        tiny_module(tiny_datamodule(babyai_real), **{"state_values": VALUES, **options})


def test_slot_words_must_fit_the_env_layout():
    with pytest.raises(ValueError, match="names 17 state numbers and 7 actions, this env has 10 and 40"):
        get_slot_words("babyai", 10, 40)
