"""The installed package: the wheel carries the code and the shipped data and plays from a clean
environment without the source tree; user artifacts go to NLMCS_DATA or the per-user data
directory, never into the package."""

from __future__ import annotations

import os
import site
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from setuptools import find_packages

ROOT = Path(__file__).resolve().parents[1]


def test_package_list_names_every_package_and_data_folder():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    found = set()
    for top in ("manual_pipeline", "corpus", "nlmcs"):
        found |= {top} | {f"{top}.{sub}" for sub in find_packages(ROOT / top)}
    data = {f"nlmcs.data.{d.name}" for d in (ROOT / "data").iterdir() if d.is_dir()}
    # folders of files only, no modules: listed so that the wheel carries them without warning
    files_only = {"nlmcs.serve.static"}
    assert listed == found | {"nlmcs.data"} | data | files_only
    assert config["package-dir"] == {"nlmcs.data": "data"}


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """A wheel built from this checkout, installed into a fresh venv that borrows only the
    third-party dependencies of the test environment (a .pth line, no editable finder)."""
    tmp = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                    "--no-build-isolation", "-w", str(tmp / "dist"), str(ROOT)],
                   check=True, capture_output=True)  # fmt: skip
    wheel = next((tmp / "dist").glob("nlmcs-*.whl"))
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"),
                    "install", "-q", "--no-deps", str(wheel)], check=True, capture_output=True)
    purelib = subprocess.run([str(venv / "bin" / "python"), "-c",
                              "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    (Path(purelib) / "_test_dependencies.pth").write_text(
        "\n".join(p for p in site.getsitepackages() if "site-packages" in p) + "\n")
    return wheel, venv, Path(purelib)


def _run(venv: Path, cwd: Path, *argv: str, env: dict) -> subprocess.CompletedProcess:
    full = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(cwd / "home"), **env}
    return subprocess.run(list(argv), cwd=cwd, env=full, capture_output=True, text=True)


def test_wheel_holds_the_shipped_data(installed):
    wheel, _, _ = installed
    names = zipfile.ZipFile(wheel).namelist()
    assert "nlmcs/data/rulesets/classic.json" in names
    assert "nlmcs/data/manuals/civ-guide.md" in names
    assert "nlmcs/data/decoys/unrelated.txt" in names  # `nlmcs relevance accuracy`'s default
    assert "nlmcs/data/nets/civ.pt" in names  # `nlmcs play --method puct-net`'s default
    assert "nlmcs/data/nets/civ-100.pt" in names  # the same for games of 45 turns or more
    assert "nlmcs/data/nets/civ-100-clone.pt" in names  # shipped before: stored runs replay it
    assert {"nlmcs/serve/static/index.html", "nlmcs/serve/static/client.js"} <= set(names)
    assert not any(n.startswith(("data/", "tests/")) for n in names)


@pytest.mark.slow
def test_installed_package_plays_text_from_a_clean_folder(installed, tmp_path):
    _, venv, purelib = installed
    store = tmp_path / "store"
    env = {"NLMCS_DATA": str(store)}
    where = _run(venv, tmp_path, str(venv / "bin" / "python"), "-c",
                 "import nlmcs, nlmcs.paths; print(nlmcs.__file__); "
                 "print(nlmcs.paths.shipped_dir())", env=env)  # fmt: skip
    module, shipped = where.stdout.split()
    assert module.startswith(str(purelib)) and shipped == str(purelib / "nlmcs" / "data")
    before = sorted(p.relative_to(purelib) for p in (purelib / "nlmcs").rglob("*")
                    if "__pycache__" not in p.parts)  # fmt: skip
    out = _run(venv, tmp_path, "nlmcs", "play", "--method", "text", "--map", "tiny", "--steps",
               "1", "--rollouts", "2", "--depth", "2", "--no-progress", env=env)
    assert out.returncode == 0, out.stderr
    assert "note: parsing the shipped manual civ-guide" in out.stderr
    assert (store / "manuals" / "civ-guide" / "meta.json").is_file()
    after = sorted(p.relative_to(purelib) for p in (purelib / "nlmcs").rglob("*")
                   if "__pycache__" not in p.parts)  # fmt: skip
    assert after == before  # nothing was written into the installed package


def test_without_nlmcs_data_artifacts_go_to_the_user_data_dir(installed, tmp_path):
    _, venv, _ = installed
    env = {k: v for k, v in os.environ.items() if k != "NLMCS_DATA"}
    env["XDG_DATA_HOME"] = str(tmp_path / "xdg")
    env.pop("PATH", None)
    env.pop("HOME", None)
    out = _run(venv, tmp_path, "nlmcs", "manual", "list", env=env)
    assert out.returncode == 0, out.stderr
    assert str(tmp_path / "xdg" / "nlmcs" / "manuals") in out.stdout
