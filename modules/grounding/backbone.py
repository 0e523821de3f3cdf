"""The causal language model under the grounding heads: a local Hugging Face directory, or a small
Llama built from a config when nothing pretrained is available (nothing is ever downloaded).

The from-config backbone is initialised from a fixed seed, so it can be rebuilt bit for bit, and
it reads a word-level vocabulary of the env's instructions and prompts (a few hundred words,
``tokenizers``' WordLevel model): small enough that its embeddings and text head can train and
ship with the adapter, which a 30k-entry vocabulary could not.
"""

from __future__ import annotations

from pathlib import Path

import torch
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers
from transformers import (
    AutoConfig,
    AutoModelForCausalLM,
    AutoTokenizer,
    LlamaConfig,
    LlamaForCausalLM,
    PreTrainedModel,
    PreTrainedTokenizerBase,
    PreTrainedTokenizerFast,
)

from datamodules.grounding_prompts import end_of_text_id
from imaginebench.errors import UserInputError

SPECIAL_TOKENS = {"pad_token": "[PAD]", "unk_token": "[UNK]", "eos_token": "[END]"}

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def word_level_tokenizer(vocabulary: list[str]) -> PreTrainedTokenizerFast:
    """A tokenizer whose tokens are ``vocabulary`` (after the special tokens); other words map to [UNK]."""
    table = {token: i for i, token in enumerate([*SPECIAL_TOKENS.values(), *dict.fromkeys(vocabulary)])}
    tokenizer = Tokenizer(models.WordLevel(table, unk_token=SPECIAL_TOKENS["unk_token"]))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, **SPECIAL_TOKENS)


def load_tokenizer(path: str | None, vocabulary: list[str] | None = None) -> PreTrainedTokenizerBase:
    """A local tokenizer directory, or else a word-level tokenizer over ``vocabulary``."""
    if path is None:
        if not vocabulary:
            raise ValueError(
                "grounding: a backbone built from a config needs a vocabulary (linked from data.vocabulary) or a tokenizer directory"
            )
        return word_level_tokenizer(vocabulary)
    if not Path(path).is_dir():
        raise UserInputError(f"model.tokenizer (default: model.backbone): directory {path!r} does not exist")
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    if end_of_text_id(tokenizer) is None:
        raise ValueError(f"grounding: tokenizer {path!r} has neither an EOS nor a SEP token to end generated text")
    return tokenizer


def build_backbone(
    path: str | None,
    vocab_size: int,
    hidden_size: int,
    num_layers: int,
    num_heads: int,
    intermediate_size: int,
    max_positions: int,
    init_seed: int,
    dtype: str,
    keep_layers: int | None = None,
    random_weights: bool = False,
) -> PreTrainedModel:
    """``path`` set: load that directory (e.g. Llama-2-7b-chat) with ``local_files_only``, keeping
    only its first ``keep_layers`` decoder layers if set; ``random_weights`` builds the directory's
    architecture with freshly initialised weights instead (under ``init_seed``): the same layers and
    tokenizer without what pretraining put in them, the control that says what the prior adds.
    Otherwise build a Llama from the size arguments, initialised under ``init_seed`` without touching
    the global random state."""
    if dtype not in DTYPES:
        raise ValueError(f"grounding: backbone_dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
    if path is not None:
        if not Path(path).is_dir():
            raise UserInputError(f"model.backbone: directory {path!r} does not exist")
        if random_weights:
            config = AutoConfig.from_pretrained(path, local_files_only=True)
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(init_seed)
                model = AutoModelForCausalLM.from_config(config).to(DTYPES[dtype])
        else:
            model = AutoModelForCausalLM.from_pretrained(path, local_files_only=True, dtype=DTYPES[dtype])
        return model if keep_layers is None else keep_first_layers(model, keep_layers)
    if random_weights:
        raise UserInputError(
            "model.backbone_init: 'random' re-initialises a named or local backbone; backbone null is built at random"
        )
    if keep_layers is not None:
        raise ValueError(
            "grounding: backbone_layers truncates a pretrained backbone; a backbone built from a config takes num_layers"
        )
    config = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=hidden_size,
        num_hidden_layers=num_layers,
        num_attention_heads=num_heads,
        num_key_value_heads=num_heads,
        intermediate_size=intermediate_size,
        max_position_embeddings=max_positions,
        tie_word_embeddings=False,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(init_seed)
        model = LlamaForCausalLM(config)
    return model.to(DTYPES[dtype])


def keep_first_layers(model: PreTrainedModel, count: int) -> PreTrainedModel:
    """Drop every decoder layer after the first ``count``: a pretrained stack's embeddings and lower
    layers at a fraction of the cost (the final norm and the text head stay); what the cut costs in
    quality is measured in docs/grounding-variants.md, not assumed."""
    layers = model.get_decoder().layers
    if not 1 <= count <= len(layers):
        raise ValueError(
            f"grounding: backbone_layers must be between 1 and {len(layers)} for this backbone, got {count}"
        )
    model.get_decoder().layers = layers[:count]
    model.config.num_hidden_layers = count
    if getattr(model.config, "layer_types", None):
        model.config.layer_types = model.config.layer_types[:count]
    return model


def fingerprint(parameters: list[torch.Tensor]) -> list[float]:
    """A cheap identity check of frozen weights: the sum and the sum of squares, in float64."""
    total = sum((p.detach().double().sum() for p in parameters), torch.zeros((), dtype=torch.float64))
    squares = sum((p.detach().double().square().sum() for p in parameters), torch.zeros((), dtype=torch.float64))
    return [float(total), float(squares)]
