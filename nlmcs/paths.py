"""Where shipped data is read from and where a user's artifacts are stored.

Shipped data (rulesets, the project's guide, sample corpora) is read-only: inside an installed
wheel it is the `nlmcs/data` folder, mapped there from the repository's top-level `data/` by
pyproject.toml; in a source checkout (an editable install maps no data) it is `data/` itself.
A user's artifacts (ingested manuals, corpora, converted rulesets) go under `NLMCS_DATA`, or else
the per-user data directory (`platformdirs`, e.g. ~/.local/share/nlmcs), never into the package.
"""

from __future__ import annotations

import os
import re
from importlib import resources
from pathlib import Path

from nlmcs.errors import UserInputError

SOURCE_DATA = Path(__file__).resolve().parents[1] / "data"

_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


def validate_store_name(name: object, *, kind: str) -> str:
    """Return `name` if it can name a folder of a store (a manual, a corpus): 1-100 letters,
    digits, '.', '_' or '-', starting with a letter or digit, so never a path outside it."""
    if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
        raise UserInputError(
            f"bad {kind} name {name!r}: use 1-100 letters, digits, '.', '_' or '-', starting "
            "with a letter or digit (no path separators)"
        )
    return name


def shipped_dir() -> Path:
    """The folder of shipped data (read-only)."""
    packaged = Path(str(resources.files("nlmcs") / "data"))
    return packaged if packaged.is_dir() else SOURCE_DATA


def shipped_file(*parts: str) -> Path:
    """A shipped file, e.g. `shipped_file("rulesets", "classic.json")`."""
    path = shipped_dir().joinpath(*parts)
    if not path.is_file():
        raise UserInputError(f"{path}: shipped file missing (is the installation complete?)")
    return path


def data_root() -> Path:
    """Root of the user's stored artifacts: `NLMCS_DATA` if set, else the per-user data dir."""
    env = os.environ.get("NLMCS_DATA")
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_data_dir("nlmcs", appauthor=False))


def manuals_dir() -> Path:
    return data_root() / "manuals"


def corpora_dir() -> Path:
    return data_root() / "corpora"


def rulesets_dir() -> Path:
    return data_root() / "rulesets"
