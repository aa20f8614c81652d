"""numba's cached machine code is dropped when a kernel package's sources change (numba itself
checks each kernel against its own file only)."""

from __future__ import annotations

from pathlib import Path

from nlmcs.machine_code import drop_stale


def _package(tmp_path):
    pkg = tmp_path / "kernels"
    (pkg / "__pycache__").mkdir(parents=True)
    (pkg / "a.py").write_text("X = 1\n")
    (pkg / "b.py").write_text("Y = 2\n")
    return pkg


def _cached(pkg):
    for name in ("a.f-1.py311.nbi", "a.f-1.py311.1.nbc"):
        (pkg / "__pycache__" / name).write_text("machine code")
    (pkg / "__pycache__" / "a.cpython-311.pyc").write_text("bytecode")


def test_machine_code_goes_when_a_source_or_a_constant_module_changes(tmp_path):
    pkg = _package(tmp_path)
    constants = tmp_path / "tables.py"
    constants.write_text("ROAD = 4\n")
    _cached(pkg)
    assert drop_stale(pkg, also=[constants])  # no stamp yet: nothing says the cache is current
    assert sorted(p.name for p in (pkg / "__pycache__").iterdir()) == [
        "a.cpython-311.pyc", "machine-code-sources.sha256"]
    _cached(pkg)
    assert not drop_stale(pkg, also=[constants])  # unchanged sources: the cache stays
    assert (pkg / "__pycache__" / "a.f-1.py311.nbi").exists()
    (pkg / "b.py").write_text("Y = 3\n")
    assert drop_stale(pkg, also=[constants])
    assert not (pkg / "__pycache__" / "a.f-1.py311.nbi").exists()
    _cached(pkg)
    constants.write_text("ROAD = 8\n")
    assert drop_stale(pkg, also=[constants])
    assert not (pkg / "__pycache__" / "a.f-1.py311.nbc").exists()


def test_a_read_only_install_is_left_alone(tmp_path, monkeypatch):
    """Where the cache folder cannot be changed (an installed package), nothing fails."""
    pkg = _package(tmp_path)
    _cached(pkg)

    def refuse(self, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "unlink", refuse)
    monkeypatch.setattr(Path, "write_text", refuse)
    assert not drop_stale(pkg)
    assert (pkg / "__pycache__" / "a.f-1.py311.nbi").exists()
    assert not (pkg / "__pycache__" / "machine-code-sources.sha256").exists()


def test_a_missing_source_changes_nothing(tmp_path):
    pkg = _package(tmp_path)
    _cached(pkg)
    assert not drop_stale(pkg, also=[tmp_path / "gone.py"])
    assert (pkg / "__pycache__" / "a.f-1.py311.nbi").exists()
