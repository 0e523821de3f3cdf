"""The one error type for problems in what the user gave: a file, a field or an option.

Commands print such an error as one line (``imaginebench <command>: <message>``) and exit non-zero
without a traceback; every other exception is a bug and keeps its traceback. Set
``IMAGINEBENCH_DEBUG=1`` to see the traceback of a user error too.
"""

from __future__ import annotations


class UserInputError(ValueError):
    """A problem with the user's input; the message names the file, field or option."""
