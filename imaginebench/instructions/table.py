"""A fixed set of instruction texts with their embeddings, looked up by text or row."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from imaginebench.instructions.encoder import InstructionEncoder


@dataclass
class InstructionTable:
    """Every instruction a level can emit, encoded once so environments never run the encoder."""

    texts: list[str]
    embeddings: np.ndarray
    encoder_id: str
    _rows: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.embeddings.ndim != 2 or len(self.texts) != len(self.embeddings):
            raise ValueError(
                f"InstructionTable: {len(self.texts)} texts but embeddings of shape {self.embeddings.shape}"
            )
        self._rows = {text: row for row, text in enumerate(self.texts)}

    @classmethod
    def build(cls, texts: list[str], encoder: InstructionEncoder) -> InstructionTable:
        unique = list(dict.fromkeys(texts))
        return cls(unique, encoder.encode(unique), encoder.encoder_id)

    @property
    def dim(self) -> int:
        return int(self.embeddings.shape[1])

    def row(self, text: str) -> int:
        try:
            return self._rows[text]
        except KeyError:
            raise KeyError(f"instruction not in this table: {text!r}") from None

    def embedding(self, text: str) -> np.ndarray:
        return self.embeddings[self.row(text)]
