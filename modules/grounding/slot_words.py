"""Start a grid state's value embeddings and the action embeddings from the backbone's own words for them.

Written here because no library maps a model's slots to its vocabulary. A phrase's vector is the mean of its
tokens' input embeddings, scaled to the backbone's typical token norm (a state slot, the sum of one vector per
dimension, gets each at that norm over √dims, so the slot as a whole is about as loud as one token). The vectors
train on from there; with the no-prior toy they start from its random embeddings, a control for the prior.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn
from transformers import PreTrainedTokenizerBase

from imaginebench.envs.slot_words import SlotWords


def phrase_embeddings(phrases: list[str], tokenizer: PreTrainedTokenizerBase, embedding: nn.Embedding) -> Tensor:
    """``(len(phrases), width)``: each phrase's mean token embedding, read as the phrase appears mid-sentence."""
    rows = []
    for phrase in phrases:
        ids = tokenizer(" " + phrase, add_special_tokens=False)["input_ids"]
        if not ids:
            raise ValueError(f"model.slot_words: the tokenizer gives no tokens for {phrase!r}")
        rows.append(embedding.weight[torch.tensor(ids, device=embedding.weight.device)].float().mean(0))
    return torch.stack(rows)


@torch.no_grad()
def init_slots_from_words(
    state_table: nn.Embedding,
    values: int,
    action_embedding: nn.Embedding,
    words: SlotWords,
    tokenizer: PreTrainedTokenizerBase,
    embedding: nn.Embedding,
) -> None:
    """Overwrite ``state_table`` row ``d·values + v`` and ``action_embedding`` row ``a`` with their phrases' vectors."""
    token_norm = embedding.weight.float().norm(dim=-1).median()
    dims = len(words.state)
    for dim, phrases in enumerate(words.state):
        phrases = list(phrases[:values])
        if not phrases:
            continue
        vectors = _at_norm(phrase_embeddings(phrases, tokenizer, embedding), token_norm / math.sqrt(dims))
        state_table.weight[dim * values : dim * values + len(phrases)] = vectors.to(state_table.weight.dtype)
    if words.actions:
        vectors = _at_norm(phrase_embeddings(list(words.actions), tokenizer, embedding), token_norm)
        action_embedding.weight.copy_(vectors.to(action_embedding.weight.dtype))


def _at_norm(vectors: Tensor, norm: Tensor) -> Tensor:
    return vectors / vectors.norm(dim=-1, keepdim=True).clamp_min(1e-8) * norm
