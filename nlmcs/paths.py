"""Where shipped data and stored artifacts live.

`NLMCS_DATA` overrides the data root so tests and users can keep artifacts elsewhere.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


def data_root() -> Path:
    return Path(os.environ.get("NLMCS_DATA", REPO_ROOT / "data"))


def manuals_dir() -> Path:
    return data_root() / "manuals"


def corpora_dir() -> Path:
    return data_root() / "corpora"


def rulesets_dir() -> Path:
    return data_root() / "rulesets"
