"""The documentation builds as a site with no broken link, and README stays a page."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_mkdocs_builds_strict(tmp_path):
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                          str(tmp_path / "site")], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert (tmp_path / "site" / "net" / "index.html").exists()


def test_readme_is_a_page_whose_links_exist():
    import re

    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) < 200
    for target in re.findall(r"\]\(([^)#]+)\)", text):
        assert (ROOT / target).exists(), target
