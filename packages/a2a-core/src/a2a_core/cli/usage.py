"""The command-line mistake every CLI module raises (its own module: no import cycles)."""

from __future__ import annotations

__all__ = ["UsageError"]


class UsageError(Exception):
    """A mistake the user can fix on the command line (exit status 2).

    ``cause`` is the exception behind it when its traceback helps (a TARGET
    module that raised at import): ``--debug`` shows it, else only this line.
    """

    def __init__(self, message: str, *, cause: BaseException | None = None) -> None:
        super().__init__(message)
        self.cause = cause
