"""The packages import one way: down the layers of docs/layout.md, never up or across, counting
imports inside functions and under TYPE_CHECKING (a lazy import is still a dependency)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _layers() -> dict[str, int]:
    """The table of docs/layout.md, so the docs and the check cannot disagree."""
    text = (ROOT / "docs" / "layout.md").read_text()
    layers = {}
    for level, cells in re.findall(r"^\| (\d+) \| (.+) \|$", text, flags=re.M):
        for name in re.findall(r"`([\w.]+)`", cells):
            layers[name] = int(level)
    return layers


LAYERS = _layers()


def _unit(module: str) -> str | None:
    """The layered unit a module belongs to: the longest table entry that is it or holds it."""
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        name = ".".join(parts[:n])
        if name in LAYERS:
            return name
    return None


def _modules():
    for top in ("nlmcs", "manual_pipeline", "corpus"):
        for path in sorted((ROOT / top).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            yield ".".join(parts[:-1] if parts[-1] == "__init__" else parts), path


def _imports(path: Path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            # `from nlmcs import methods` imports the module nlmcs.methods
            yield from (f"{node.module}.{a.name}" for a in node.names)


def test_the_layer_table_is_read_and_covers_every_module():
    assert LAYERS["nlmcs.search"] < LAYERS["nlmcs.methods"] < LAYERS["nlmcs.experiments"]
    missing = [m for m, _ in _modules() if _unit(m) is None]
    assert missing == []


def test_every_import_goes_down_the_layers():
    wrong = []
    for module, path in _modules():
        here = _unit(module)
        for name in _imports(path):
            if name.split(".")[0] not in ("nlmcs", "manual_pipeline", "corpus"):
                continue
            there = _unit(name)
            if there == here:
                continue
            if LAYERS[there] >= LAYERS[here]:
                wrong.append(f"{module} imports {name} ({there}, layer {LAYERS[there]} is not "
                             f"below {here}, layer {LAYERS[here]})")
    assert wrong == []


def test_the_search_reads_no_model_reader_network_or_corpus():
    for module, path in _modules():
        if _unit(module) == "nlmcs.search":
            for name in _imports(path):
                assert not name.startswith(("nlmcs.model", "nlmcs.reader", "nlmcs.net",
                                            "corpus", "manual_pipeline")), (module, name)
