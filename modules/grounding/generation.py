"""Decoding with a grounded model: imaginary rollouts (goal → states and actions) and rollout
explanations (rollout → goal text).

Rollouts alternate a fresh forward pass per slot: the action ``a_t`` is read at the slot of the
state ``s_t`` it follows, then ``a_t`` is fed in and ``s_{t+1}`` is read at its slot. (KALM's
released generator read both from one pass, so its actions lagged a step behind their states.)
With ``use_cache`` each pass feeds only the new slot and reuses the keys and values of the prefix;
without it the whole sequence is re-encoded every time (the reference the cached path must match).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch
from torch import Tensor

from datamodules.grounding_prompts import ACTION, STATE, Sequence, end_of_text_id, words

if TYPE_CHECKING:
    from modules.grounding.model import GroundingModule


@dataclass
class ImaginedBatch:
    states: Tensor  # (B, horizon + 1, S); rows past a rollout's length repeat nothing meaningful
    actions: Tensor  # (B, horizon) or (B, horizon, A)
    success: Tensor  # (B, horizon + 1) bool: the goal check on each generated state
    lengths: Tensor  # (B,) number of actions in each rollout


class _Decoder:
    """Feeds slots one at a time to the backbone, with or without a KV cache."""

    def __init__(self, module: GroundingModule, prompt: dict[str, Tensor], use_cache: bool):
        self.module, self.use_cache = module, use_cache
        self.embeddings = module.embed(prompt)
        self.mask = prompt["attention_mask"]
        output = module.decode(self.embeddings, self.mask, use_cache=use_cache)
        self.cache = output.past_key_values if use_cache else None
        self.last_hidden = output.last_hidden_state[:, -1]

    def feed(self, embedding: Tensor) -> Tensor:
        """Append one position (``embedding`` ``(B, H)``) and return the hidden state it produces."""
        self.mask = torch.cat([self.mask, self.mask.new_ones(self.mask.shape[0], 1)], dim=1)
        if self.use_cache:
            output = self.module.decode(embedding[:, None], self.mask, past_key_values=self.cache, use_cache=True)
            self.cache = output.past_key_values
        else:
            self.embeddings = torch.cat([self.embeddings, embedding[:, None]], dim=1)
            output = self.module.decode(self.embeddings, self.mask)
        self.last_hidden = output.last_hidden_state[:, -1]
        return self.last_hidden


def _slot_embedding(module: GroundingModule, kind: int, value: Tensor) -> Tensor:
    """The input embedding of one state or action slot per row, as :meth:`GroundingModule.embed` makes it."""
    size = value.shape[0]
    batch = {
        "token_ids": torch.full((size, 1), module.builder.pad_id, device=value.device),
        "kinds": torch.full((size, 1), kind, device=value.device),
        "states": value[:, None]
        if kind == STATE
        else value.new_zeros(size, 1, module.env_spec.state_dim, dtype=torch.float32),
        "actions": value[:, None] if kind == ACTION else _zero_actions(module, size, value.device),
    }
    return module.embed(batch)[:, 0]


def _zero_actions(module: GroundingModule, size: int, device: torch.device) -> Tensor:
    if module.env_spec.is_discrete:
        return torch.zeros(size, 1, dtype=torch.int64, device=device)
    return torch.zeros(size, 1, module.env_spec.action_dim, device=device)


@torch.no_grad()
def imagine_rollouts(
    module: GroundingModule,
    instructions: list[str],
    first_states: Tensor,
    goal_reached: Callable[[int, Tensor], bool],
    horizon: int | list[int],
    temperature: float = 0.0,
    generator: torch.Generator | None = None,
    use_cache: bool = True,
) -> ImaginedBatch:
    """Generate one rollout per instruction from its first state (taken from the env's reset).

    ``goal_reached(row, states_so_far)`` is the env's success check on the generated states; a
    rollout stops when it holds or after ``horizon`` actions (one per row where tasks differ). Rows that stopped keep being decoded
    with the batch (their outputs are ignored), so the batch stays rectangular.
    """
    device = module.device
    first_states = first_states.to(device)
    prompts: list[Sequence] = [
        module.builder.generation_prompt(text, state.cpu()) for text, state in zip(instructions, first_states)
    ]
    prompt = {k: v.to(device) for k, v in module.builder.collate(prompts, pad_left=True).items()}
    size = len(instructions)
    decoder = _Decoder(module, prompt, use_cache)
    states = [first_states.float()]
    actions: list[Tensor] = []
    success = [torch.tensor([goal_reached(i, states[0][i : i + 1].cpu()) for i in range(size)], device=device)]
    lengths = torch.zeros(size, dtype=torch.int64, device=device)
    done = torch.zeros(size, dtype=torch.bool, device=device)  # every rollout takes at least one action
    horizons = torch.as_tensor(horizon, device=device).expand(size)
    for step in range(int(horizons.max())):
        done |= horizons <= step
        if bool(done.all()):
            break
        action = module.predict_action(decoder.last_hidden, temperature, generator)
        state = module.predict_state(decoder.feed(_slot_embedding(module, ACTION, action)), states[-1])
        decoder.feed(_slot_embedding(module, STATE, state))
        actions.append(action)
        states.append(state)
        lengths += (~done).long()
        history = torch.stack(states, dim=1).cpu()
        reached = torch.tensor([bool(not done[i]) and goal_reached(i, history[i]) for i in range(size)], device=device)
        success.append(reached)
        done |= reached
    return ImaginedBatch(
        torch.stack(states, 1).cpu(), torch.stack(actions, 1).cpu(), torch.stack(success, 1).cpu(), lengths.cpu()
    )


@torch.no_grad()
def explain_rollouts(module: GroundingModule, rollouts: list[tuple[Tensor, Tensor]], max_tokens: int = 32) -> list[str]:
    """Greedy goal text for each ``(states, actions)`` rollout, with a KV cache."""
    device = module.device
    prompts = [module.builder.explanation_prompt(states, actions) for states, actions in rollouts]
    prompt = {k: v.to(device) for k, v in module.builder.collate(prompts, pad_left=True).items()}
    decoder = _Decoder(module, prompt, use_cache=True)
    head = module.lm.get_output_embeddings()
    end = end_of_text_id(module.tokenizer)
    tokens: list[Tensor] = []
    finished = torch.zeros(len(rollouts), dtype=torch.bool, device=device)
    for _ in range(max_tokens):
        token = head(decoder.last_hidden.to(head.weight.dtype)).argmax(-1)
        tokens.append(token)
        finished |= token == end
        if bool(finished.all()):
            break
        decoder.feed(module.lm.get_input_embeddings()(token))
    texts = []
    for row in torch.stack(tokens, 1).tolist():
        row = row[: row.index(end)] if end in row else row
        texts.append(module.tokenizer.decode(row, skip_special_tokens=True).strip())
    return texts


def token_f1(predicted: str, reference: str) -> float:
    """SQuAD-style token F1 between two texts' lower-cased words (punctuation ignored)."""
    a, b = normalized(predicted).split(), normalized(reference).split()
    common = sum(min(a.count(w), b.count(w)) for w in set(a))
    if common == 0:
        return 0.0
    precision, recall = common / len(a), common / len(b)
    return 2 * precision * recall / (precision + recall)


def normalized(text: str) -> str:
    """Lower-cased words without punctuation: the form exact-match accuracy compares."""
    return " ".join(w for w in words(text) if w[0].isalnum() or w[0] == "_")
