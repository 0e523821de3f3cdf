"""The one error type for problems in what the user gave: a file, a field or an option.

Commands print such an error as one line (``imaginebench <command>: <message>``) and exit non-zero
without a traceback (:func:`reported_to_user`); every other exception is a bug and keeps its
traceback. Set ``IMAGINEBENCH_DEBUG=1`` to see the traceback of a user error too.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

DEBUG_VARIABLE = "IMAGINEBENCH_DEBUG"


class UserInputError(ValueError):
    """A problem with the user's input; the message names the file, field or option."""


class MissingExtraError(UserInputError, ImportError):
    """An optional extra that the asked-for env needs is not installed (``pip install -e .[libero]``): reported
    as one line naming the install command, as a user error is, and still an ``ImportError`` to code that checks."""


@contextmanager
def reported_to_user(command: str) -> Iterator[None]:
    """Run a command's body; a :class:`UserInputError` from it becomes one line on stderr and exit status 1."""
    try:
        yield
    except UserInputError as error:
        if os.environ.get(DEBUG_VARIABLE, "0") not in ("", "0"):
            raise
        print(f"imaginebench {command}: {' '.join(str(error).split())}", file=sys.stderr)
        raise SystemExit(1) from None


@contextmanager
def naming(option: str) -> Iterator[None]:
    """Prefix a :class:`UserInputError` raised inside with the option it came from (``data.env_id: …``)."""
    try:
        yield
    except UserInputError as error:
        raise type(error)(f"{option}: {error}") from error


def check_at_least(least: float, options: dict[str, float | None]) -> None:
    """Each option's value (``None``: not given) is at least ``least``."""
    for option, value in options.items():
        if value is not None and not value >= least:
            raise UserInputError(f"{option} must be >= {least}, got {value}")


def check_can_create(path: str | Path, option: str) -> None:
    """Refuse a path that cannot be created (under a file, a read-only or unwritable directory)
    before any work is done, by creating and removing a directory in its nearest existing ancestor."""
    path = Path(path).absolute()
    ancestor = next(parent for parent in path.parents if parent.exists())
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".imaginebench-probe-", dir=ancestor))
    except OSError as error:
        raise UserInputError(f"{option} {path}: cannot be created in {ancestor} ({error.strerror})") from None
