"""Paths the manual-pipeline tests share (a plain module: test directories are not packages)."""

from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "manuals"
FREECIV_DIR = Path("/usr/share/games/freeciv")
