"""Atomic writes: a reader sees the old file or the new one, never half of one."""

from __future__ import annotations

import glob
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch

from imaginebench.errors import UserInputError


def read_json(file: Path, *keys: str) -> Any:
    """``file``'s JSON value (or the value under ``keys``), ``None`` when the file is missing or
    unreadable or the keys are not there: for deciding what a directory is, not for loading it."""
    try:
        value = json.loads(Path(file).read_text())
        for key in keys:
            value = value[key]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return value


def read_json_file(path: Path) -> Any:
    """``path``'s JSON value, for loading a file the user named: one line naming it when it cannot be read."""
    try:
        return json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as error:
        raise UserInputError(f"{path}: cannot read ({error})") from error


def atomic_write_text(text: str, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False, prefix=f".{path.name}.tmp-") as handle:
        handle.write(text)
        tmp = Path(handle.name)
    tmp.chmod(0o666 & ~_umask())  # NamedTemporaryFile makes it 0600
    os.replace(tmp, path)


def atomic_torch_save(obj: object, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.tmp-")
    os.close(fd)
    try:
        torch.save(obj, tmp)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes it 0600
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _make_temp_dir(parent: Path, prefix: str) -> Path:
    """``mkdtemp`` makes a 0700 directory; the renamed result gets the user's normal permissions."""
    tmp = Path(tempfile.mkdtemp(dir=parent, prefix=prefix))
    tmp.chmod(0o777 & ~_umask())
    return tmp


@contextmanager
def atomic_directory(path: Path, replace: bool = True) -> Iterator[Path]:
    """Yield a temporary sibling directory that is renamed to ``path`` only if the block succeeds.

    An existing ``path`` is replaced only after the new one is complete, and only with ``replace``;
    otherwise a ``path`` that appeared meanwhile raises :class:`FileExistsError` and is left as it is.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _make_temp_dir(path.parent, f".{path.name}.tmp-")
    try:
        yield tmp
        if path.exists():
            if not replace:
                raise FileExistsError(f"{path} already exists")
            old = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}.old-"))
            os.replace(path, old / path.name)
            os.replace(tmp, path)
            shutil.rmtree(old)
        else:
            os.replace(tmp, path)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)


def remove_stale_siblings(path: Path) -> None:
    """Clean up after an :func:`atomic_directory` of ``path`` that was killed: remove its temporary
    directories, and put back a replaced ``path`` that was moved aside but never succeeded.

    Call it only while holding ``path``'s write lock (:mod:`imaginebench.locks`): then no other
    writer's temporary directories can be among them."""
    path = Path(path)
    if not path.parent.is_dir():
        return
    for old in sorted(path.parent.glob(f".{glob.escape(path.name)}.old-*")):
        if not path.exists() and (old / path.name).exists():
            os.replace(old / path.name, path)
        shutil.rmtree(old)
    for tmp in path.parent.glob(f".{glob.escape(path.name)}.tmp-*"):
        shutil.rmtree(tmp) if tmp.is_dir() else tmp.unlink()
