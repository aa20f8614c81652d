"""Errors of the manual pipeline; all are bad input, so the CLI prints one line and exits 2."""

from __future__ import annotations

from nlmcs.errors import UserInputError


class ManualError(UserInputError):
    """A manual source or stored artifact that cannot be used; the message names the file."""


class FreecivSyntaxError(ManualError):
    """A FreeCiv section file that does not parse; the message names the file and the line."""

    def __init__(self, path: object, line: int, problem: str) -> None:
        super().__init__(f"{path}: line {line}: {problem}")
        self.path = path
        self.line = line
        self.problem = problem
