"""The four KALM fine-tuning tasks as token/slot sequences with loss masks.

A sequence interleaves text tokens with *slots* that carry a state or an action vector; the model
overwrites the embedding at each slot with a learned projection of its vector, so numbers never
pass through text (KALM, Sec. 4). Uniformly for every kind, the output at position ``p`` predicts
the content of position ``p + 1``; ``supervised[p + 1]`` says whether that prediction is trained.
The prompt wording is ours; the four tasks and what each supervises follow KALM's released code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import torch
from transformers import PreTrainedTokenizerBase

TEXT, STATE, ACTION = 0, 1, 2
PROMPT_WORDS = "Instruction: Rollout: Dynamics. State: Action: Next state: Consequence. Start: Final state: Explain."
"""Every word the templates below use (a word-level vocabulary must contain them)."""
GROUNDING_TASKS = ("generation", "dynamics", "consequence", "explanation")
"""rollout generation (goal → rollout), dynamics prediction ((s, a) → s'), consequence prediction
((s₀, goal) → final state), rollout explanation (rollout → goal text)."""


def words(text: str) -> list[str]:
    """Lower-cased words and punctuation marks, split as the word-level tokenizer splits them."""
    return re.findall(r"\w+|[^\w\s]", text.lower())


def end_of_text_id(tokenizer: PreTrainedTokenizerBase) -> int | None:
    return tokenizer.eos_token_id if tokenizer.eos_token_id is not None else tokenizer.sep_token_id


@dataclass(frozen=True)
class Example:
    """One real rollout used for one task; ``step`` picks the transition dynamics prediction uses."""

    task: str
    instruction: str
    states: torch.Tensor  # (T + 1, state_dim)
    actions: torch.Tensor  # (T,) int64 or (T, action_dim)
    step: int = 0


@dataclass
class Sequence:
    token_ids: torch.Tensor  # (L,) int64; a placeholder id at slots
    kinds: torch.Tensor  # (L,) int64: TEXT, STATE or ACTION
    states: torch.Tensor  # (L, state_dim) float32, zero outside state slots
    actions: torch.Tensor  # (L,) int64 or (L, action_dim) float32, zero outside action slots
    supervised: torch.Tensor  # (L,) bool: the content of this position is a training target
    goal: torch.Tensor  # (L,) bool: a token of the goal instruction, or of its label ("Instruction:") before it

    def __len__(self) -> int:
        return int(self.token_ids.numel())


class SequenceBuilder:
    """Builds the sequences of every task for one tokenizer and one env's state/action layout."""

    def __init__(self, tokenizer: PreTrainedTokenizerBase, state_dim: int, discrete_actions: bool, action_dim: int = 0):
        self.tokenizer = tokenizer
        self.state_dim = state_dim
        self.discrete_actions = discrete_actions
        self.action_dim = action_dim
        self.end_id = end_of_text_id(tokenizer)
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else self.end_id
        self.tokenize = lru_cache(maxsize=None)(self._tokenize)
        self.goal_tokens = lru_cache(maxsize=None)(self._goal_tokens)

    def _tokenize(self, text: str) -> tuple[int, ...]:
        return tuple(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def _goal_tokens(self, before: str, goal: str, after: str) -> tuple[tuple[int, ...], tuple[bool, ...]]:
        """``before + goal + after`` tokenised as one text (the same tokens as :meth:`tokenize` gives it), and for
        each token whether it lies in ``before + goal`` (the label and the goal), wholly or in part."""
        encoded = self.tokenizer(before + goal + after, add_special_tokens=False, return_offsets_mapping=True)
        end = len(before) + len(goal)
        flags = tuple(begin < end for begin, _ in encoded["offset_mapping"])
        return tuple(encoded["input_ids"]), flags

    # ----------------------------------------------------------------------------- the tasks

    def build(self, example: Example) -> Sequence:
        states, actions, t = example.states, example.actions, example.step
        if example.task == "generation":
            return self.generation(example.instruction, states, actions)
        if example.task == "dynamics":
            return self.dynamics(states[t], actions[t], states[t + 1])
        if example.task == "consequence":
            return self.consequence(example.instruction, states[0], states[-1])
        if example.task == "explanation":
            return self.explanation(states, actions, example.instruction)
        raise ValueError(f"grounding: unknown task {example.task!r}; valid: {', '.join(GROUNDING_TASKS)}")

    def generation(self, instruction: str, states: torch.Tensor, actions: torch.Tensor) -> Sequence:
        """Instruction, then s₀ a₀ s₁ … s_T: every action and every state after s₀ is a target
        (s₀ comes from the env's reset at imagination time, so it is never predicted)."""
        pieces = self.generation_prompt(instruction, states[0], finish=False)
        self._rollout(pieces, states, actions, supervised=True, first_state=False)
        return pieces.finish()

    def generation_prompt(self, instruction: str, first_state: torch.Tensor, finish: bool = True) -> Sequence | _Pieces:
        pieces = _Pieces(self).goal_text("Instruction: ", instruction, " Rollout:").state(first_state)
        return pieces.finish() if finish else pieces

    def dynamics(self, state: torch.Tensor, action: torch.Tensor, next_state: torch.Tensor) -> Sequence:
        pieces = self.dynamics_prompt(state, action, finish=False)
        return pieces.state(next_state, supervised=True).finish()

    def dynamics_prompt(self, state: torch.Tensor, action: torch.Tensor, finish: bool = True) -> Sequence | _Pieces:
        """``(s, a)`` up to where ``s'`` is read: no goal in it."""
        pieces = _Pieces(self).text("Dynamics. State:").state(state).text("Action:").action(action)
        pieces.text("Next state:")
        return pieces.finish() if finish else pieces

    def consequence(self, instruction: str, first_state: torch.Tensor, final_state: torch.Tensor) -> Sequence:
        pieces = _Pieces(self).text("Consequence. Start:").state(first_state)
        pieces.goal_text("Instruction: ", instruction, " Final state:")
        return pieces.state(final_state, supervised=True).finish()

    def explanation(self, states: torch.Tensor, actions: torch.Tensor, instruction: str) -> Sequence:
        """The rollout, then the instruction's tokens and an end-of-text token as targets."""
        pieces = self.explanation_prompt(states, actions, finish=False)
        return pieces.text(instruction, supervised=True).token(self.end_id, supervised=True).finish()

    def explanation_prompt(
        self, states: torch.Tensor, actions: torch.Tensor, finish: bool = True
    ) -> Sequence | _Pieces:
        pieces = _Pieces(self).text("Explain. Rollout:")
        self._rollout(pieces, states, actions, supervised=False, first_state=True)
        pieces.text("Instruction:")
        return pieces.finish() if finish else pieces

    def _rollout(
        self, pieces: _Pieces, states: torch.Tensor, actions: torch.Tensor, supervised: bool, first_state: bool
    ) -> None:
        if first_state:
            pieces.state(states[0])
        for action, state in zip(actions, states[1:]):
            pieces.action(action, supervised=supervised).state(state, supervised=supervised)

    # ----------------------------------------------------------------------------- batching

    def collate(self, sequences: list[Sequence], pad_left: bool = False) -> dict[str, torch.Tensor]:
        """Pad to a batch; ``pad_left`` for prompts that generation continues. Padding is never supervised."""
        length = max(len(s) for s in sequences)
        fills = {
            "token_ids": self.pad_id,
            "kinds": TEXT,
            "states": 0.0,
            "actions": 0,
            "supervised": False,
            "goal": False,
        }
        batch: dict[str, torch.Tensor] = {}
        for name, fill in fills.items():
            columns = []
            for sequence in sequences:
                value = getattr(sequence, name)
                pad = value.new_full((length - len(sequence), *value.shape[1:]), fill)
                columns.append(torch.cat([pad, value] if pad_left else [value, pad]))
            batch[name] = torch.stack(columns)
        mask = torch.stack(
            [torch.arange(length) >= length - len(s) if pad_left else torch.arange(length) < len(s) for s in sequences]
        )
        batch["attention_mask"] = mask.long()
        return batch


class _Pieces:
    """Accumulates one sequence, piece by piece."""

    def __init__(self, builder: SequenceBuilder):
        self.builder = builder
        self.token_ids: list[int] = []
        self.kinds: list[int] = []
        self.states: list[torch.Tensor | None] = []
        self.actions: list[torch.Tensor | None] = []
        self.supervised: list[bool] = []
        self.goal: list[bool] = []

    def _add(
        self,
        token_id: int,
        kind: int,
        state: torch.Tensor | None,
        action: torch.Tensor | None,
        supervised: bool,
        goal: bool = False,
    ) -> _Pieces:
        self.token_ids.append(token_id)
        self.goal.append(goal)
        self.kinds.append(kind)
        self.states.append(state)
        self.actions.append(action)
        self.supervised.append(supervised)
        return self

    def text(self, text: str, supervised: bool = False) -> _Pieces:
        for token_id in self.builder.tokenize(text):
            self.token(token_id, supervised)
        return self

    def goal_text(self, before: str, goal: str, after: str) -> _Pieces:
        """Prompt text that holds the goal instruction: the tokens of ``before`` and ``goal`` are flagged in
        ``Sequence.goal``."""
        token_ids, flags = self.builder.goal_tokens(before, goal, after)
        for token_id, flag in zip(token_ids, flags):
            self._add(token_id, TEXT, None, None, False, goal=flag)
        return self

    def token(self, token_id: int, supervised: bool = False) -> _Pieces:
        return self._add(token_id, TEXT, None, None, supervised)

    def state(self, state: torch.Tensor, supervised: bool = False) -> _Pieces:
        return self._add(self.builder.pad_id, STATE, state, None, supervised)

    def action(self, action: torch.Tensor, supervised: bool = False) -> _Pieces:
        return self._add(self.builder.pad_id, ACTION, None, action, supervised)

    def finish(self) -> Sequence:
        b = self.builder
        state_zero = torch.zeros(b.state_dim)
        action_zero = torch.zeros((), dtype=torch.int64) if b.discrete_actions else torch.zeros(b.action_dim)
        states = torch.stack(
            [torch.as_tensor(s, dtype=torch.float32) if s is not None else state_zero for s in self.states]
        )
        action_dtype = torch.int64 if b.discrete_actions else torch.float32
        actions = torch.stack(
            [torch.as_tensor(a, dtype=action_dtype) if a is not None else action_zero for a in self.actions]
        )
        return Sequence(
            torch.tensor(self.token_ids, dtype=torch.int64),
            torch.tensor(self.kinds, dtype=torch.int64),
            states,
            actions,
            torch.tensor(self.supervised, dtype=torch.bool),
            torch.tensor(self.goal, dtype=torch.bool),
        )
