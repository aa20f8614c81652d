"""Exceptions that the CLI turns into one clear line and a non-zero exit.

Every package raises a subclass of `UserInputError` for bad files and bad arguments;
anything else is a bug and keeps its traceback.
"""


class UserInputError(Exception):
    """A problem with what the user gave us (a file, a name, an option); the message says which."""
