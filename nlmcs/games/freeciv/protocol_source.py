"""Where FreeCiv 3.0's protocol definition (`common/networking/packets.def`) comes from.

It is FreeCiv's file, so nlmcs does not ship it: `fetch` downloads Debian's source package of
`freeciv` (apt-get source --download-only, with a private source list, so the machine's apt
configuration is untouched) and keeps `packets.def` and the C headers the wire sizes come from
(for the constants check of the tests) under the data folder. `NLMCS_FREECIV_SOURCE` may instead
name an unpacked FreeCiv 3.0 source tree.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

from nlmcs.errors import UserInputError
from nlmcs.paths import data_root

PACKETS_DEF = "common/networking/packets.def"
_KEPT_DIRS = ("common/", "utility/")  # packets.def and the headers (*.h) of these folders
_SOURCES = """Types: deb-src
URIs: {mirror}
Suites: {suite}
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
"""


def source_dir() -> Path:
    """The FreeCiv source tree nlmcs reads (it may not exist yet)."""
    env = os.environ.get("NLMCS_FREECIV_SOURCE")
    return Path(env) if env else data_root() / "freeciv" / "source"


def packets_def_path() -> Path:
    """`packets.def`, or one clear line on how to get it."""
    path = source_dir() / PACKETS_DEF
    if not path.is_file():
        raise UserInputError(f"{path}: FreeCiv's protocol definition is missing "
                             "(run `nlmcs freeciv fetch-protocol`)")
    return path


def fetch(*, dest: Path | None = None, mirror: str = "http://deb.debian.org/debian",
          suite: str = "bookworm", log=print) -> Path:
    """Download Debian's `freeciv` source package and keep its protocol files under `dest`."""
    dest = Path(dest) if dest else source_dir()
    if shutil.which("apt-get") is None:
        raise UserInputError("apt-get not found: fetch-protocol needs a Debian-like system "
                             "(or set NLMCS_FREECIV_SOURCE to an unpacked FreeCiv 3.0 source)")
    with tempfile.TemporaryDirectory(prefix="nlmcs-freeciv-src-") as tmp:
        tmp = Path(tmp)
        sources = tmp / "sources.list.d"
        sources.mkdir()
        (sources / "deb-src.sources").write_text(_SOURCES.format(mirror=mirror, suite=suite))
        lists = tmp / "lists"
        (lists / "partial").mkdir(parents=True)
        opts = ["-o", f"Dir::Etc::SourceParts={sources}", "-o", "Dir::Etc::SourceList=/dev/null",
                "-o", f"Dir::State::Lists={lists}"]
        if os.geteuid() == 0:  # the download lands in a folder apt's own user cannot enter
            opts += ["-o", "APT::Sandbox::User=root"]
        log(f"fetching Debian's freeciv source package ({suite})")
        _run(["apt-get", *opts, "update"], tmp)
        _run(["apt-get", *opts, "source", "--download-only", "freeciv"], tmp)
        tarballs = sorted(tmp.glob("freeciv_*.orig.tar.*"))
        if not tarballs:
            raise UserInputError("apt-get source gave no freeciv_*.orig.tar.* file")
        dest.parent.mkdir(parents=True, exist_ok=True)
        # Staged next to `dest`, so that putting it in place is a rename, not a copy.
        staged = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
        try:
            with tarfile.open(tarballs[0]) as tar:
                for member in tar:
                    inner = member.name.partition("/")[2]
                    if not member.isfile() or not inner.startswith(_KEPT_DIRS):
                        continue
                    if inner != PACKETS_DEF and not inner.endswith(".h"):
                        continue
                    target = staged / inner
                    target.parent.mkdir(parents=True, exist_ok=True)
                    with tar.extractfile(member) as src, open(target, "wb") as out:
                        shutil.copyfileobj(src, out)
            if not (staged / PACKETS_DEF).is_file():
                raise UserInputError(f"{tarballs[0].name} holds no {PACKETS_DEF}")
            (staged / "SOURCE").write_text(tarballs[0].name + "\n")
            old = dest.with_name(dest.name + ".old")
            shutil.rmtree(old, ignore_errors=True)
            if dest.exists():
                dest.rename(old)
            staged.rename(dest)  # (a failed rename leaves the old tree as .old, not nothing)
            shutil.rmtree(old, ignore_errors=True)
        finally:
            shutil.rmtree(staged, ignore_errors=True)
    log(f"kept {PACKETS_DEF} and the headers of {tarballs[0].name} in {dest}")
    return dest


def _run(cmd: list[str], cwd: Path) -> None:
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise UserInputError(f"`{' '.join(cmd[:1] + cmd[-2:])}` failed: {tail[0]}")
