"""The reader tests share the toy game and hand-parsed manual of tests/search/toy_game.py."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "search"))
