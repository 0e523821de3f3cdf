"""Batches mixing real and imaginary transitions, drawn from two TorchRL replay buffers.

``"ratio"`` fixes the real share of every batch to ``round(mix_ratio_real * batch_size)`` rows, so
the two sources are weighted independently of their sizes. ``"concat"`` samples uniformly over the
union of all transitions, as the original ImagineBench code did, so the real share of a batch is
random with mean ``num_real / (num_real + num_imaginary)``.
"""

from __future__ import annotations

from typing import Literal, Sequence

import numpy as np
import torch
from tensordict import TensorDict
from torchrl.data import LazyTensorStorage, TensorDictReplayBuffer

from imaginebench.datasets.episodes import SOURCES

SOURCE_REAL = SOURCES.index("real")
SOURCE_IMAGINARY = SOURCES.index("imaginary")
MixMode = Literal["ratio", "concat"]


def transition_buffer(transitions: TensorDict, generator: torch.Generator) -> TensorDictReplayBuffer:
    """A uniform-sampling buffer holding exactly ``transitions``."""
    buffer = TensorDictReplayBuffer(storage=LazyTensorStorage(transitions.shape[0]), generator=generator)
    buffer.extend(transitions)
    return buffer


class MixedSampler:
    """Draws whole batches from a real and an imaginary buffer; each row carries its ``source``.

    Real data may be absent only for ``mix_ratio_real == 0`` (imaginary only); imaginary data only for
    ``mix_ratio_real == 1`` in ``"ratio"`` mode (real only). Rows come real first, then imaginary.
    Three generators (real rows, imaginary rows, the concat split) make the batches a function
    of the seed alone.
    """

    def __init__(
        self,
        real: TensorDict | None,
        imaginary: TensorDict | None,
        mix_mode: MixMode = "ratio",
        mix_ratio_real: float = 0.5,
        seed: int | Sequence[int] = 0,
    ) -> None:
        if mix_mode not in ("ratio", "concat"):
            raise ValueError(f"mix_mode must be 'ratio' or 'concat', got {mix_mode!r}")
        if not 0.0 <= mix_ratio_real <= 1.0:
            raise ValueError(f"mix_ratio_real must lie in [0, 1], got {mix_ratio_real}")
        needs_imaginary = mix_mode == "concat" or mix_ratio_real < 1.0
        needs_real = mix_mode == "concat" or mix_ratio_real > 0.0
        if needs_imaginary and not _has_rows(imaginary):
            raise ValueError(
                f"mix_mode={mix_mode!r} with mix_ratio_real={mix_ratio_real} draws imaginary transitions, "
                "but there is no imaginary data; add imaginary datasets or set mix_mode='ratio', mix_ratio_real=1.0"
            )
        if needs_real and not _has_rows(real):
            raise ValueError(
                f"mix_mode={mix_mode!r} with mix_ratio_real={mix_ratio_real} draws real transitions, "
                "but there is no real data; add real datasets or set mix_mode='ratio', mix_ratio_real=0.0"
            )
        self.mix_mode = mix_mode
        self.mix_ratio_real = mix_ratio_real
        self._generators = [torch.Generator() for _ in range(3)]
        real_gen, imaginary_gen, self._split_generator = self._generators
        self.real = transition_buffer(real, real_gen) if _has_rows(real) else None
        self.imaginary = transition_buffer(imaginary, imaginary_gen) if _has_rows(imaginary) else None
        self.reseed(seed)

    def reseed(self, seed: int | Sequence[int]) -> None:
        """Restart all streams from ``seed`` (e.g. ``(seed, rank, epoch)``); streams are independent."""
        states = np.random.SeedSequence(seed).generate_state(len(self._generators), dtype=np.uint64)
        for generator, state in zip(self._generators, states.tolist()):
            generator.manual_seed(state)

    def num_real(self, batch_size: int) -> int:
        """How many rows of the next batch are real."""
        if self.mix_mode == "ratio":
            return round(self.mix_ratio_real * batch_size)
        num_real, num_imaginary = len(self.real), len(self.imaginary)
        rows = torch.randint(num_real + num_imaginary, (batch_size,), generator=self._split_generator)
        return int((rows < num_real).sum())

    def sample(self, batch_size: int) -> TensorDict:
        """One batch of ``batch_size`` transitions with an int64 ``source`` column."""
        num_real = self.num_real(batch_size)
        parts = []
        for buffer, count, source in ((self.real, num_real, SOURCE_REAL), (self.imaginary, batch_size - num_real, SOURCE_IMAGINARY)):
            if count:
                part = buffer.sample(count).exclude("index")
                part["source"] = torch.full((count,), source, dtype=torch.int64)
                parts.append(part)
        return torch.cat(parts)


def _has_rows(transitions: TensorDict | None) -> bool:
    return transitions is not None and transitions.shape[0] > 0
