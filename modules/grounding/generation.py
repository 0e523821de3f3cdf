"""Decoding with a grounded model: imaginary rollouts (goal → states and actions) and rollout
explanations (rollout → goal text).

Rollouts alternate a fresh forward pass per slot: the action ``a_t`` is read at the slot of the
state ``s_t`` it follows, then ``a_t`` is fed in and ``s_{t+1}`` is read at its slot. (KALM's
released generator read both from one pass, so its actions lagged a step behind their states.)
With ``use_cache`` each pass feeds only the new slot and reuses the keys and values of the prefix;
without it the whole sequence is re-encoded every time (the reference the cached path must match).
With a window, the context is re-encoded from the latest steps every W/2 steps (:func:`imagine_rollouts`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, get_args

import torch
from torch import Tensor

from datamodules.grounding_prompts import ACTION, STATE, end_of_text_id, words
from imaginebench.errors import check_at_least
from imaginebench.shipped import NextStateSource

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
        self.goal = prompt.get("goal")
        output = module.decode(self.embeddings, self.mask, use_cache=use_cache, goal=self.goal)
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
            if self.goal is not None:
                self.goal = torch.cat([self.goal, self.goal.new_zeros(self.goal.shape[0], 1)], dim=1)
            output = self.module.decode(self.embeddings, self.mask, goal=self.goal)
        self.last_hidden = output.last_hidden_state[:, -1]
        return self.last_hidden


def _slot_embedding(module: GroundingModule, kind: int, value: Tensor, latest_state: Tensor) -> Tensor:
    """The input embedding of one state or action slot per row, as :meth:`GroundingModule.embed` makes it
    in a sequence whose latest state slot before it holds ``latest_state`` (an action frame reads it)."""
    size = value.shape[0]
    states = latest_state[:, None].float().expand(size, 2, module.env_spec.state_dim).clone()
    actions = _zero_actions(module, size, value.device).repeat_interleave(2, dim=1)
    if kind == STATE:
        states[:, 1] = value
    else:
        actions[:, 1] = value
    batch = {
        "token_ids": torch.full((size, 2), module.builder.pad_id, device=value.device),
        "kinds": torch.tensor([STATE, kind], device=value.device).expand(size, 2),
        "states": states,
        "actions": actions,
    }
    return module.embed(batch)[:, 1]


def dynamics_next_states(module: GroundingModule, states: Tensor, actions: Tensor) -> Tensor:
    """Each row's next state read from the dynamics-prediction prompt of its ``(state, action)``, which holds no goal.
    Every such prompt has the same length, so the batch needs no padding and no cache."""
    prompts = [module.builder.dynamics_prompt(state, action) for state, action in zip(states.cpu(), actions.cpu())]
    batch = {k: v.to(module.device) for k, v in module.builder.collate(prompts).items()}
    hidden = module.decode(module.embed(batch), batch["attention_mask"]).last_hidden_state[:, -1]
    return module.predict_state(hidden, states)


def _zero_actions(module: GroundingModule, size: int, device: torch.device) -> Tensor:
    if module.env_spec.is_discrete:
        return torch.zeros(size, 1, dtype=torch.int64, device=device)
    return torch.zeros(size, 1, module.env_spec.action_dim, device=device)


def _context(
    module: GroundingModule, instructions: list[str], states: list[Tensor], actions: list[Tensor], steps: int
) -> dict[str, Tensor]:
    """The left-padded prompt decoding continues from: each row's goal and its latest ``steps`` steps
    (0: the latest state alone), laid out as a generation example, i.e. as a training window begins."""
    size = len(instructions)
    recent_states = torch.stack(states[len(states) - steps - 1 :], 1).cpu()
    recent_actions = (
        torch.stack(actions[len(actions) - steps :], 1).cpu()
        if steps
        else _zero_actions(module, size, torch.device("cpu"))[:, :0]
    )
    sequences = [
        module.builder.generation(text, row_states, row_actions)
        for text, row_states, row_actions in zip(instructions, recent_states, recent_actions)
    ]
    return {k: v.to(module.device) for k, v in module.builder.collate(sequences, pad_left=True).items()}


def kept_steps(window_steps: int) -> int:
    """Steps a rebuilt context keeps: half a window, so the model always sees some of the rollout's
    recent past (Meta-World's and LIBERO's states hold no velocities) while it rebuilds every W/2 steps."""
    return window_steps // 2


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
    window_steps: int | None = None,
    next_states: NextStateSource = "rollout",
) -> ImaginedBatch:
    """Generate one rollout per instruction from its first state (taken from the env's reset).

    ``goal_reached(row, states_so_far)`` is the env's success check on the generated states; a
    rollout stops when it holds or after ``horizon`` actions (one per row where tasks differ). Rows that stopped keep being decoded
    with the batch (their outputs are ignored), so the batch stays rectangular.

    ``window_steps`` W (default: the window the model was grounded on, ``module.hparams.window_steps``;
    ``None`` there: the whole rollout stays in context): once the context holds W steps after its
    first state, it is re-encoded as the generation prompt of the goal and the latest
    :func:`kept_steps` steps, exactly how a training window begins, and decoding goes on. Only the
    model's context restarts: the rollout stays one full-rate sequence of states and actions, and the
    model never reads more than the prompt and 2W slots, so a horizon of any length fits its positions.

    ``next_states``: ``"rollout"`` reads ``s_{t+1}`` at ``a_t``'s slot, where the model attends to the goal (and
    can predict the outcome the goal wants rather than the one the action has); ``"dynamics"`` reads it from the
    goal-free dynamics prompt of ``(s_t, a_t)``, the grounding task that teaches transitions alone. Either way the
    rollout's context holds the state chosen, so the next action follows it.
    """
    if next_states not in get_args(NextStateSource):
        raise ValueError(f"next_states must be one of {get_args(NextStateSource)}, got {next_states!r}")
    window = module.hparams.window_steps if window_steps is None else window_steps
    check_at_least(1, {"window_steps": window})
    device = module.device
    first_states = first_states.to(device)
    size = len(instructions)
    states = [first_states.float()]
    actions: list[Tensor] = []
    decoder = _Decoder(module, _context(module, instructions, states, actions, 0), use_cache)
    context_steps = 0
    success = [torch.tensor([goal_reached(i, states[0][i : i + 1].cpu()) for i in range(size)], device=device)]
    lengths = torch.zeros(size, dtype=torch.int64, device=device)
    done = torch.zeros(size, dtype=torch.bool, device=device)  # every rollout takes at least one action
    horizons = torch.as_tensor(horizon, device=device).expand(size)
    for step in range(int(horizons.max())):
        done |= horizons <= step
        if bool(done.all()):
            break
        if context_steps == window:
            context_steps = kept_steps(window)
            decoder = _Decoder(module, _context(module, instructions, states, actions, context_steps), use_cache)
        action = module.predict_action(decoder.last_hidden, temperature, generator)
        action_hidden = decoder.feed(_slot_embedding(module, ACTION, action, states[-1]))
        if next_states == "dynamics":
            state = dynamics_next_states(module, states[-1], action)
        else:
            state = module.predict_state(action_hidden, states[-1])
        decoder.feed(_slot_embedding(module, STATE, state, states[-1]))
        context_steps += 1
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
