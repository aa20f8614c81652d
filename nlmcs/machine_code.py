"""Keeping numba's on-disk machine code in step with the source it was compiled from.

numba checks a cached function against its own file only: a kernel that calls kernels of other
modules, or reads constants from them, keeps running their old code after they change. So a
package of kernels calls `drop_stale` when imported: it fingerprints the package's sources (and
the modules whose constants it bakes in) and, when they changed since the cache was written,
deletes the package's cached machine code so numba compiles it again.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path


def drop_stale(package_dir: str | Path, also: Iterable[str | Path] = ()) -> bool:
    """Delete the numba cache of the package in `package_dir` when its sources or `also`
    changed since the cache was made; returns whether it did. A read-only install is left as
    it is (numba then caches elsewhere, keyed by the installed files, which do not change)."""
    here = Path(package_dir)
    sources = sorted(here.glob("*.py")) + [Path(p) for p in also]
    digest = hashlib.sha256()
    for path in sources:
        try:
            digest.update(path.read_bytes())
        except OSError:
            return False
    cache = here / "__pycache__"
    stamp = cache / "machine-code-sources.sha256"
    try:
        if stamp.read_text() == digest.hexdigest():
            return False
    except OSError:
        pass
    try:
        cache.mkdir(exist_ok=True)
        for f in list(cache.glob("*.nbi")) + list(cache.glob("*.nbc")):
            f.unlink(missing_ok=True)
        tmp = stamp.with_name(f"{stamp.name}.{os.getpid()}.tmp")
        tmp.write_text(digest.hexdigest())
        os.replace(tmp, stamp)
    except OSError:
        return False
    return True
