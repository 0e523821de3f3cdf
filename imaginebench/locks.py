"""One writer per output directory: an advisory lock file beside it, released when its holder dies.

Written by hand because the lock must name its holder (pid, host, command, start time) in the
error a second writer sees, and ``filelock`` truncates the lock file it opens; the lock itself is
the kernel's ``flock``, so a killed writer never leaves a lock that has to be removed by hand.
"""

from __future__ import annotations

import fcntl
import json
import os
import shlex
import socket
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from imaginebench.errors import UserInputError
from imaginebench.storage import read_json


class LockedError(UserInputError):
    """Another process is writing the directory."""


def lock_file(path: Path) -> Path:
    return path.parent / f".{path.name}.lock"


@contextmanager
def exclusive_lock(path: str | Path, wait: bool = False) -> Iterator[None]:
    """Hold the write lock of ``path`` for the block. Held by another process: wait for it
    (``wait=True``, saying who it waits for) or raise :class:`LockedError` naming the holder."""
    file = lock_file(Path(path).absolute())
    file.parent.mkdir(parents=True, exist_ok=True)
    handle = open(file, "a+")
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(file)
            if not wait:
                raise LockedError(
                    f"{path} is being written by {holder} (lock {file}); wait for it to finish or write elsewhere"
                ) from None
            print(f"{path}: waiting for {holder} to finish writing it", file=sys.stderr, flush=True)
            fcntl.flock(handle, fcntl.LOCK_EX)
        handle.seek(0)
        handle.truncate()
        holder = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "command": shlex.join(sys.argv),
            "since": time.strftime("%Y-%m-%d %H:%M:%S"),
        }
        handle.write(json.dumps(holder))
        handle.flush()
        yield
    finally:
        handle.close()  # closing releases the flock


def _holder(file: Path) -> str:
    holder = read_json(file)
    try:
        return f"pid {holder['pid']} on {holder['host']} since {holder['since']} ({holder['command']})"
    except (KeyError, TypeError):
        return "another process"
