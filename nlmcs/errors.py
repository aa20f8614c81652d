"""Exceptions that the CLI turns into one clear line and a non-zero exit.

Every package raises a subclass of `UserInputError` for bad files and bad arguments, and
`WorkerExited` when a worker process dies under it; anything else is a bug and keeps its
traceback.
"""


class UserInputError(Exception):
    """A problem with what the user gave us (a file, a name, an option); the message says which."""


class WorkerExited(RuntimeError):
    """A worker process died under a search (killed, out of memory, failing to start): not the
    user's input and not a bug here, so the CLI says which worker and how in one line."""
