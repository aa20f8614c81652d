"""Errors of the manual pipeline; all are bad input, so the CLI prints one line and exits 2."""

from __future__ import annotations

from nlmcs.errors import UserInputError
from nlmcs.secfile import SectionFileError


class ManualError(UserInputError):
    """A manual source or stored artifact that cannot be used; the message names the file."""


class FreecivSyntaxError(ManualError, SectionFileError):
    """A FreeCiv section file of a manual that does not parse; the message names the file and
    the line ("FILE: line N: problem")."""
