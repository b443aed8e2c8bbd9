"""The error a user can act on: bad input, bad settings, a missing model or service.

Services raise a subclass with a one-line message; the command line prints that line
and exits with ``exit_code`` (2: fix the command or its input; 1: a service failed).
Anything else that escapes is a bug and keeps its traceback.
"""

from __future__ import annotations


class UserError(Exception):
    """A failure whose one-line message tells the user what to fix."""

    exit_code = 2


class InvalidSetting(UserError):
    """A setting a service was given is out of bounds: named by the service's own word for it (``n``,
    ``max_tokens``, ``month``, ``latex.check=false`` for a value that would help), which the command line
    turns into the option that sets it.

    The message is ``"<setting> <problem>"``, or ``template`` with ``{setting}`` where the setting is named.
    """

    def __init__(self, setting: str, problem: str = "", *, template: str | None = None):
        self.setting, self.problem, self.template = setting, problem, template
        super().__init__(self.naming(setting.replace("=", " = ")))

    def naming(self, setting: str) -> str:
        """The message with the setting called ``setting`` (the service's word, or the option that sets it)."""
        return self.template.replace("{setting}", setting) if self.template else f"{setting} {self.problem}"


class ServiceError(UserError):
    """A service the command needs failed (arXiv, the embedded model server): worth retrying later."""

    exit_code = 1
