"""The error a user can act on: bad input, bad settings, a missing model or service.

Services raise a subclass with a one-line message; the command line prints that line
and exits with ``exit_code`` (2: fix the command or its input; 1: a service failed).
Anything else that escapes is a bug and keeps its traceback.
"""

from __future__ import annotations


class UserError(Exception):
    """A failure whose one-line message tells the user what to fix."""

    exit_code = 2


class ServiceError(UserError):
    """A service the command needs failed (arXiv, the embedded model server): worth retrying later."""

    exit_code = 1
