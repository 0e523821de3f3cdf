"""tensordict: load memory-mapped tensors copy-on-write."""

from __future__ import annotations

import importlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tensordict import TensorDict

_memmap_patch = threading.Lock()
_memmap_module = importlib.import_module("tensordict.memmap")  # ``tensordict.memmap`` is also a function


def load_memmap_copy_on_write(prefix: str | Path) -> TensorDict:
    """``TensorDict.load_memmap`` with every file mapped privately (copy-on-write).

    tensordict 0.14 maps a file *shared* whenever the process may write it, so an in-place op on a
    loaded tensor writes through to the file and a truncated file is silently zero-extended to its
    recorded size (``torch.from_file(shared=True)``). Mapped privately, writes stay in memory and a
    short file is an error. Pinned by ``tests/datasets/test_episodes.py`` (writes and truncation).
    """
    with _memmap_patch, _files_look_read_only():
        return TensorDict.load_memmap(prefix)


@contextmanager
def _files_look_read_only() -> Iterator[None]:
    original = _memmap_module._is_writable
    _memmap_module._is_writable = lambda file_path: False
    try:
        yield
    finally:
        _memmap_module._is_writable = original
