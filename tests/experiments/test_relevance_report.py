"""`nlmcs relevance report` and `nlmcs play --report`: the page holds what the log holds (top
sentences, marked words, maps per step), needs nothing outside itself, and shows two logs side
by side."""

from __future__ import annotations

import html
from html.parser import HTMLParser

from relevance_records import TEXT_GAME, records, write

from nlmcs.cli import main
from nlmcs.experiments.relevance.log import read_log
from nlmcs.experiments.relevance.views import mark_words


class _Refs(HTMLParser):
    """Every src/href, and tags that would pull in something (script, link, iframe, ...)."""

    def __init__(self):
        super().__init__()
        self.refs: list[tuple[str, str, str]] = []
        self.tags: list[str] = []
        self.imgs = 0

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.imgs += tag == "img"
        self.refs.extend((tag, k, v or "") for k, v in attrs if k in ("src", "href", "srcset"))


def _refs(page: str) -> _Refs:
    parser = _Refs()
    parser.feed(page)
    return parser


def _marked_html(rec: dict) -> str:
    return "".join(html.escape(p, quote=True) if lab is None else
                   f'<span class="w-{lab}">{html.escape(p, quote=True)}</span>'
                   for p, lab in mark_words(rec["sampled_text"], word_labels=rec["word_labels"]))


def test_report_holds_the_logs_sentences_labels_and_maps(text_game):
    log_path, report = text_game
    page = report.read_text()
    log = read_log(log_path)
    labelled = 0
    for rec in log.decisions:
        for s in rec["sentences"][:5]:
            assert (html.escape(s["text"], quote=True) if s["id"] >= 0 else "NULL") in page
        if rec.get("sampled_text"):
            assert f"sampled #{rec['sampled_sentence']}: {_marked_html(rec)}" in page
            labelled += sum(1 for _, lab in rec["word_labels"] if lab != "background")
        assert html.escape(", ".join(rec["state_labels"])) in page
    assert labelled and page.count('<span class="w-') >= labelled
    for step in log.steps():
        assert f'id="step-{step}"' in page and f'alt="map at step {step}"' in page
    assert 'alt="final state"' in page and 'alt="normalised relevance entropy by step"' in page
    assert "Learned output weights" in page  # associations from the logged weights
    for section in ("games", "entropy", "sentences", "associations", "timeline"):
        assert f'<section id="{section}">' in page


def test_report_is_self_contained(text_game):
    page = text_game[1].read_text()
    refs = _refs(page)
    assert refs.imgs >= 5
    for tag, _attr, value in refs.refs:
        assert not value.lower().startswith(("http:", "https:", "//", "file:")), (tag, value)
        if tag == "img":
            assert value.startswith("data:image/png;base64,")
        else:
            assert value.startswith("#"), (tag, value)  # only jumps within the page
    assert not {"script", "link", "iframe", "object", "embed"} & set(refs.tags)
    assert "default-src 'none'" in page  # and the page forbids loading anything else


def test_compare_shows_two_logs_side_by_side(text_game, tmp_path, capsys):
    other = tmp_path / "random.jsonl"
    assert main(["play", *TEXT_GAME, "--method", "random-text", "--steps", "2", "--log-states",
                 "--log-decisions", str(other)]) == 0  # fmt: skip
    out = tmp_path / "both.html"
    assert main(["relevance", "report", str(text_game[0]), "--compare", str(other),
                 "--html", str(out), "--map-every", "2"]) == 0  # fmt: skip
    assert f"report written to {out}" in capsys.readouterr().out
    page = out.read_text()
    assert "text (text.jsonl)" in page and "random-text (random.jsonl)" in page
    assert page.count("repeat(2, minmax(0, 1fr))") >= 5  # every section in two columns
    assert 'alt="map at step 0"' in page and 'alt="map at step 1"' not in page  # every 2nd
    random_text = read_log(other).decisions[0]["sentences"][0]["text"]
    assert html.escape(random_text or "NULL") in page


def test_report_of_a_log_without_states(tmp_path, capsys):
    log = write(tmp_path / "old.jsonl", records())
    out = tmp_path / "old.html"
    assert main(["relevance", "report", str(log), "--html", str(out)]) == 0
    page = out.read_text()
    assert "no state snapshots" in page and "alt=\"map at step" not in page
    assert "Settlers should build a city beside a river." in page


def test_report_refuses_bad_outputs_and_methods_without_text(tmp_path, capsys):
    log = write(tmp_path / "d.jsonl", records())
    code = main(["relevance", "report", str(log), "--html", str(tmp_path / "no" / "r.html")])
    err = capsys.readouterr().err
    assert code == 2 and "does not exist" in err and err.count("\n") == 1
    code = main(["play", "--method", "linear", "--map", "tiny", "--steps", "1", "--no-progress",
                 "--report", str(tmp_path / "r.html")])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "linear reads no text" in err and not (tmp_path / "r.html").exists()


def test_play_report_without_a_log_keeps_no_log(tmp_path, capsys):
    out = tmp_path / "r.html"
    assert main(["play", *TEXT_GAME, "--steps", "1", "--report", str(out)]) == 0
    assert "report written to" in capsys.readouterr().out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.html"]
    assert "Step 0" in out.read_text()
