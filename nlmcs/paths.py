"""Where shipped data is read from and where a user's artifacts are stored.

Shipped data (rulesets, the project's guide, sample corpora) is read-only: inside an installed
wheel it is the `nlmcs/data` folder, mapped there from the repository's top-level `data/` by
pyproject.toml; in a source checkout (an editable install maps no data) it is `data/` itself.
A user's artifacts (ingested manuals, corpora, converted rulesets) go under `NLMCS_DATA`, or else
the per-user data directory (`platformdirs`, e.g. ~/.local/share/nlmcs), never into the package.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

from nlmcs.errors import UserInputError

SOURCE_DATA = Path(__file__).resolve().parents[1] / "data"


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
