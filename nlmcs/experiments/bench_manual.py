"""Benchmark of manual ingest: sentences per second and peak memory on a ~2,000-sentence manual.

The Civilization II manual Branavan et al. used has 2,083 sentences, so the benchmark builds a
manual of about that size by repeating the blocks of a shipped manual, then times model loading and
the ingest (read, parse, store) separately. It measures the real `ingest` path, not a copy of it.
With `unpunctuated_mb` it builds the parser's worst case instead: megabytes of the source's words on
one line with no punctuation, which the ingest must cut into parser-sized pieces.
"""

from __future__ import annotations

import itertools
import re
import resource
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from manual_pipeline.errors import ManualError
from manual_pipeline.ingest import ingest
from manual_pipeline.parse import ParseConfig, load_model
from manual_pipeline.readers import detect_format, read_blocks
from manual_pipeline.textio import inspect_file
from nlmcs.paths import shipped_file

_SENTENCE_END = re.compile(r"[.!?](?:\s|$)")


@dataclass(frozen=True)
class BenchResult:
    """Figures of one benchmark run.

    Fields:
        source: the shipped manual the text was built from.
        sentences, tokens: what the ingest stored.
        load_seconds: importing spaCy and loading the model.
        ingest_seconds: reading, parsing and storing (model already loaded).
        peak_rss_mb: the process's peak resident memory (MB) at the end.
    """

    source: str
    sentences: int
    tokens: int
    load_seconds: float
    ingest_seconds: float
    peak_rss_mb: float

    @property
    def total_seconds(self) -> float:
        return self.load_seconds + self.ingest_seconds

    @property
    def sentences_per_second(self) -> float:
        return self.sentences / max(self.ingest_seconds, 1e-9)

    def rows(self) -> list[tuple[str, str]]:
        return [
            ("source", self.source),
            ("sentences", f"{self.sentences:,}"),
            ("tokens", f"{self.tokens:,}"),
            ("model load (s)", f"{self.load_seconds:.2f}"),
            ("ingest: read+parse+store (s)", f"{self.ingest_seconds:.2f}"),
            ("total incl. model load (s)", f"{self.total_seconds:.2f}"),
            ("sentences per second (parse)", f"{self.sentences_per_second:.0f}"),
            ("sentences per second (incl. load)", f"{self.sentences / self.total_seconds:.0f}"),
            ("peak memory (MB RSS)", f"{self.peak_rss_mb:.0f}"),
        ]


def build_bench_text(source: Path, *, sentences: int) -> str:
    """Markdown of about `sentences` sentences made by cycling through the blocks of `source`."""
    checked = inspect_file(source)
    blocks = list(read_blocks(checked, detect_format(source)))
    if not blocks:
        raise ManualError(f"{source}: no text to build a benchmark manual from")
    out, count, section = [], 0, None
    for block in itertools.cycle(blocks):
        if count >= sentences:
            break
        if block.section != section:
            section = block.section
            out.append(f"## {section}\n")
        out.append(("- " if block.kind == "item" else "") + block.text + "\n")
        count += max(1, len(_SENTENCE_END.findall(block.text)))
    return "\n".join(out)


def build_unpunctuated_text(source: Path, *, megabytes: int) -> str:
    """One line of about `megabytes` MB: the words of `source`, cycled, without punctuation."""
    blocks = read_blocks(inspect_file(source), detect_format(source))
    words = [w for block in blocks for w in re.findall(r"[A-Za-z0-9]+", block.text)]
    if not words:
        raise ManualError(f"{source}: no words to build a benchmark manual from")
    out, size = [], 0
    for word in itertools.cycle(words):
        if size >= megabytes * 1_000_000:
            break
        out.append(word)
        size += len(word) + 1
    return " ".join(out) + "\n"


def bench_manual(
    *, source: Path | None = None, sentences: int = 2000, unpunctuated_mb: int | None = None,
    config: ParseConfig | None = None,
) -> BenchResult:
    """Time model load and a forced ingest of a ~`sentences`-sentence manual (or of
    `unpunctuated_mb` MB without punctuation) in a scratch dir."""
    source = Path(source) if source is not None else shipped_file("manuals", "civ-guide.md")
    if not source.is_file():
        raise ManualError(f"{source}: no such file to build the benchmark manual from")
    if unpunctuated_mb is not None:
        text = build_unpunctuated_text(source, megabytes=unpunctuated_mb)
    else:
        text = build_bench_text(source, sentences=sentences)
    config = config or ParseConfig()
    with tempfile.TemporaryDirectory(prefix="nlmcs-bench-") as scratch:
        manual = Path(scratch) / ("bench.txt" if unpunctuated_mb else "bench.md")
        manual.write_text(text, encoding="utf-8")
        t0 = time.perf_counter()
        load_model(config.model)
        t1 = time.perf_counter()
        result = ingest(manual, out=Path(scratch) / "bench", force=True, config=config)
        t2 = time.perf_counter()
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    counts = result.meta["counts"]
    return BenchResult(
        source=str(source),
        sentences=counts["sentences"],
        tokens=counts["tokens"],
        load_seconds=t1 - t0,
        ingest_seconds=t2 - t1,
        peak_rss_mb=peak_kb / 1024,
    )
