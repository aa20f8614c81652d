"""Ingest: read a manual, parse it, store the artifact; a no-op when the source is unchanged.

Order matters for bad input and speed: the source is checked (a regular file, size, binary,
encoding, sha256) and compared with what is stored before spaCy is imported, and the output
directory is claimed before parsing starts, so a bad file or an unwritable target fails in a
fraction of a second and an unchanged manual costs one hashing pass. The comparison and the
write happen under the store lock, so two ingests of one name run one after the other.

Nothing is replaced silently: another file under an existing name needs `force`; a stored copy
whose files no longer match their checksums is parsed again (repaired) by a re-ingest.
"""

from __future__ import annotations

import logging
import re
import time
from collections import Counter
from collections.abc import Generator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from manual_pipeline import freeciv
from manual_pipeline.artifact import manual_dir, read_meta, validate_name, verify_files
from manual_pipeline.errors import ManualError
from manual_pipeline.parse import Batch, ParseConfig, installed_model, load_model, parse_blocks
from manual_pipeline.readers import FORMATS, Block, detect_format, looks_like_lines, read_blocks
from manual_pipeline.textio import SourceFile, inspect_file
from manual_pipeline.writer import ArtifactWriter, writing
from nlmcs.errors import UserInputError
from nlmcs.files import check_input, check_unchanged

log = logging.getLogger(__name__)
notice = logging.getLogger("nlmcs.notice")

PIPELINE_VERSION = 2
"""Bumped when readers or parse columns change, so old artifacts are rebuilt on re-ingest
(2: one-sentence-a-line files, and a line ending in a curly quote is no heading)."""
DEFAULT_MAX_BYTES = 64_000_000
MIN_STEM_COUNT = 5


@dataclass(frozen=True)
class IngestResult:
    """What an ingest did.

    Fields:
        directory: where the artifact is.
        meta: its meta.json contents.
        reused: True when the stored artifact already matched the source and nothing was parsed.
        seconds: wall time of this call.
    """

    directory: Path
    meta: dict
    reused: bool
    seconds: float


class _Counts:
    """Running document counts, updated batch by batch (memory grows with vocabulary only)."""

    def __init__(self) -> None:
        self.sections: set[str] = set()
        self.sentences = self.tokens = self.words = 0
        self.types: set[str] = set()
        self.stems: Counter[str] = Counter()

    def add(self, batch: Batch) -> None:
        t = batch.tokens
        self.sections.update(batch.sentences["section"])
        self.sentences += len(batch.sentences["sentence_id"])
        self.tokens += len(t["sentence_id"])
        for lower, stem, punct, stop in zip(
            t["lower"], t["stem"], t["is_punct"], t["is_stop"], strict=True
        ):
            if punct:
                continue
            self.words += 1
            self.types.add(lower)
            if not stop:
                self.stems[stem] += 1

    def as_dict(self) -> dict:
        return {
            "sections": len(self.sections),
            "sentences": self.sentences,
            "tokens": self.tokens,
            "words": self.words,
            "words_per_sentence": round(self.words / max(self.sentences, 1), 2),
            "vocabulary": len(self.types),
            "stems": len(self.stems),
            "model_vocabulary": sum(1 for c in self.stems.values() if c >= MIN_STEM_COUNT),
            "min_stem_count": MIN_STEM_COUNT,
        }


def table_counts(sentences, tokens) -> dict:
    """meta.json's counts of a manual's tables (a part cut from a manual, an unrelated control),
    as ingest counts them."""
    from types import SimpleNamespace

    counts = _Counts()
    counts.add(SimpleNamespace(sentences=sentences, tokens=tokens))
    return counts.as_dict()


def default_name(source: Path) -> str:
    """A manual name from a file or directory name: its stem with odd characters made '-'."""
    stem = Path(source).stem if Path(source).is_file() else Path(source).name
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", stem).strip("-.") or "manual"
    return validate_name(name[:100])


def ingest(
    source: str | Path,
    *,
    name: str | None = None,
    fmt: str = "auto",
    out: str | Path | None = None,
    root: Path | None = None,
    ruleset: str | None = None,
    force: bool = False,
    max_bytes: int | None = DEFAULT_MAX_BYTES,
    config: ParseConfig | None = None,
) -> IngestResult:
    """Parse `source` and store it as manual `name` (default: the file's stem).

    The artifact goes to `out` if given, else <root or the manuals directory>/<name>/. An
    unchanged source (same sha256, format, pipeline and model versions) is not parsed again
    unless `force`; a damaged stored copy of it is. Another source under a stored name is
    refused unless `force`. Raises ManualError for bad input; nothing stored is touched then.
    """
    started = time.perf_counter()
    config = config or ParseConfig()
    source = Path(source)
    if fmt not in FORMATS:
        raise ManualError(f"unknown format {fmt!r} (choose from {', '.join(FORMATS)})")
    try:
        check_input(source, what="manual file", allow_dir=True)
    except UserInputError as err:
        raise ManualError(str(err)) from None
    name = validate_name(name) if name is not None else default_name(source)
    if out is None:
        _refuse_twin_name(name)
    auto = fmt == "auto"
    fmt = detect_format(source) if auto else fmt
    if source.is_dir() and fmt != "freeciv":
        raise ManualError(f"{source}: is a directory; only --format freeciv reads directories")
    if ruleset is not None and not (fmt == "freeciv" and source.is_dir()):
        raise ManualError(f"{source}: --ruleset needs a FreeCiv data directory")
    files = freeciv.source_files(source, ruleset=ruleset) if fmt == "freeciv" else [source]
    checked = [inspect_file(f, max_bytes=max_bytes) for f in files]
    if auto and fmt == "text" and looks_like_lines(checked[0]):
        fmt = "lines"
    total = sum(c.size for c in checked)
    if max_bytes is not None and total > max_bytes:
        raise ManualError(
            f"{source}: {total / 1e6:.1f} MB in all is over the {max_bytes / 1e6:g} MB limit "
            "(raise it with --max-mb)"
        )
    digest = checked[0].sha256 if source.is_file() else freeciv.combined_sha256(checked, source)
    target = Path(out) if out is not None else manual_dir(name, root=root)
    parser = {**installed_model(config.model), "pipeline_version": PIPELINE_VERSION}
    source_meta = _source_meta(source, fmt, digest, checked)

    def blocks() -> Generator[Block, None, None]:
        if fmt == "freeciv":
            yield from freeciv.freeciv_blocks(checked)
        else:
            yield from read_blocks(checked[0], fmt)
        for c in checked:  # hashed, then read: both must have seen the same file
            if c.version:
                check_unchanged(c.path, c.version, again="ingest it again")

    if not _has_text(blocks(), whole=fmt == "freeciv"):
        raise ManualError(f"{source}: no sentences found (the file holds no running text)")

    with writing(target):
        stored = _stored_meta(target)
        if stored is not None and not force:
            damaged = verify_files(target, stored)
            _refuse_replacing(target, name, stored, source_meta)
            if damaged is None and _unchanged(target, stored, source_meta, parser):
                log.info("%s: unchanged since %s; nothing to do", source, stored.get("created"))
                return IngestResult(target, stored, True, time.perf_counter() - started)
            if damaged is not None:
                notice.info("%s; parsing %s again to repair it", damaged, source)
        return _parse_and_store(source, target, name, blocks, config, source_meta, parser,
                                started)


def _refuse_twin_name(name: str) -> None:
    """`NAME-random` and `NAME-random-SEED` are the random-text twins' names: a manual stored
    under one would be read as the twin of NAME."""
    from manual_pipeline.shuffle import RANDOM_SUFFIX
    from manual_pipeline.twins import parse_seeded

    if name.endswith(RANDOM_SUFFIX) or parse_seeded(name) is not None:
        raise ManualError(f"{name}: names ending in {RANDOM_SUFFIX} (or {RANDOM_SUFFIX}-SEED) "
                          "are the random-text twins' names (`nlmcs manual shuffle` makes them); "
                          "ingest under another name with --name")


def _parse_and_store(source: Path, target: Path, name: str, blocks, config: ParseConfig,
                     source_meta: dict, parser: dict, started: float) -> IngestResult:
    with ArtifactWriter(target) as writer:
        t0 = time.perf_counter()
        nlp = load_model(config.model)
        load_seconds = time.perf_counter() - t0
        counts = _Counts()
        t1 = time.perf_counter()
        for batch in parse_blocks(nlp, blocks(), config=config):
            counts.add(batch)
            writer.append(batch.sentences, batch.tokens)
        parse_seconds = time.perf_counter() - t1
        if counts.sentences == 0:
            raise ManualError(f"{source}: no sentences found (the file holds no running text)")
        meta = {
            "name": name,
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "source": source_meta,
            "parser": parser,
            "counts": counts.as_dict(),
            "timing": {
                "load_seconds": round(load_seconds, 3),
                "parse_seconds": round(parse_seconds, 3),
                "sentences_per_second": round(counts.sentences / max(parse_seconds, 1e-9), 1),
            },
            "random": None,
        }
        writer.commit(meta)
    return IngestResult(target, meta, False, time.perf_counter() - started)


def _has_text(blocks: Generator[Block, None, None], *, whole: bool) -> bool:
    """A cheap look before spaCy loads: is there any text at all?

    FreeCiv files are small and read `whole`, so a syntax error anywhere shows up here; other
    files, possibly huge, are read only up to their first block.
    """
    try:
        if whole:
            return sum(1 for _ in blocks) > 0
        return next(blocks, None) is not None
    finally:
        blocks.close()


def _source_meta(source: Path, fmt: str, digest: str, checked: list[SourceFile]) -> dict:
    return {
        "path": str(source.resolve()),
        "format": fmt,
        "sha256": digest,
        "bytes": sum(c.size for c in checked),
        "files": [
            {
                "path": str(c.path.resolve()),
                "sha256": c.sha256,
                "bytes": c.size,
                "encoding": c.encoding,
                **({"compression": c.compression} if c.compression else {}),
            }
            for c in checked
        ],
    }


def _stored_meta(target: Path) -> dict | None:
    if not (target / "meta.json").is_file():
        return None
    try:
        return read_meta(target)
    except ManualError as err:
        log.warning("rebuilding %s: %s", target, err)
        return None


def _refuse_replacing(target: Path, name: str, stored: dict, source_meta: dict) -> None:
    """Another file (or a random twin) stored under this name is replaced only with force; the
    same file, changed or not, is updated."""
    old = stored.get("source") or {}
    hint = "give another --name, or --force to replace it"
    if stored.get("random") is not None:
        raise ManualError(f"manual {name!r} ({target}) is a random-text twin of "
                          f"{stored['random'].get('source')!r}; {hint}")
    if old.get("sha256") == source_meta["sha256"] or old.get("path") in (None, ""):
        return
    if old.get("path") != source_meta["path"]:
        raise ManualError(f"manual {name!r} ({target}) holds another file, {old.get('path')}; "
                          f"{hint}")


def _unchanged(target: Path, stored: dict, source_meta: dict, parser: dict) -> bool:
    old = stored.get("source", {})
    return (
        stored.get("random") is None
        and old.get("sha256") == source_meta["sha256"]
        and old.get("format") == source_meta["format"]
        and stored.get("parser") == parser
        and stored.get("counts", {}).get("sentences", 0) > 0
        and all((target / f).is_file() for f in ("sentences.parquet", "tokens.parquet"))
    )
