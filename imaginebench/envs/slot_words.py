"""Named slot words: what each value of a state dimension and each action is called, in words.

A grounding model reads a whole-number state (``model.state_values``) as a sum of one learned embedding per
(dimension, value), and a discrete action as one learned embedding. Initialised at random, those vectors share
nothing with the pretrained language model's words, so its knowledge of "a locked door" or "the yellow key" cannot
reach the state the instruction is about. ``model.slot_words: NAME`` starts each from the backbone's embeddings of
the words naming it (``modules/grounding/slot_words.py``); the checkpoint records the name.
"""

from __future__ import annotations

from dataclasses import dataclass

from imaginebench.envs.babyai.slot_words import ACTION_WORDS as BABYAI_ACTION_WORDS
from imaginebench.envs.babyai.slot_words import KIND_FIELDS as BABYAI_KIND_FIELDS
from imaginebench.envs.babyai.slot_words import state_value_words as babyai_state_value_words


@dataclass(frozen=True)
class SlotWords:
    """``state[d][v]``: the words for value v of state dimension d (values past the list, and every value of a
    dimension with an empty list, keep a random start); ``actions[a]``: the words for discrete action a (empty:
    the actions keep a random start)."""

    state: tuple[tuple[str, ...], ...]
    actions: tuple[str, ...]


SLOT_WORDS: dict[str, SlotWords] = {
    "babyai": SlotWords(babyai_state_value_words(), BABYAI_ACTION_WORDS),
    "babyai-kinds": SlotWords(babyai_state_value_words(BABYAI_KIND_FIELDS), ()),
    "babyai-kinds-actions": SlotWords(babyai_state_value_words(BABYAI_KIND_FIELDS), BABYAI_ACTION_WORDS),
}


def get_slot_words(name: str, state_dim: int, num_actions: int) -> SlotWords:
    """The slot words called ``name``, checked against the env's layout; a one-line error names the option otherwise."""
    words = SLOT_WORDS.get(name)
    if words is None:
        raise ValueError(f"model.slot_words: unknown slot words {name!r}; known: {', '.join(sorted(SLOT_WORDS))}")
    if len(words.state) != state_dim or len(words.actions) not in (0, num_actions):
        raise ValueError(
            f"model.slot_words: {name!r} names {len(words.state)} state numbers and {len(words.actions)} actions, "
            f"this env has {state_dim} and {num_actions}"
        )
    return words
