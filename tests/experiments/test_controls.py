"""The controls that tell meaning from word statistics: the unrelated-text arm (shipped prose of
the manual's length, sharing few game words), the semantic share of a gain, and the relevance
each text arm's games keep. A broken control must fail here: an "unrelated" text that speaks the
manual's game words, one shorter than the manual, a share that is defined where text does not
beat no text. (A twin that kept the manual's word order fails
tests/manual_pipeline/test_manual_shuffle.py.)"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from manual_pipeline.errors import ManualError
from manual_pipeline.unrelated import UNRELATED_NAME, is_unrelated, unrelated_control
from nlmcs.errors import UserInputError
from nlmcs.experiments.ablation import stats
from nlmcs.experiments.ablation.report import (
    arm_relevance,
    relevance_markdown,
    semantic_shares,
    shares_markdown,
)
from nlmcs.experiments.relevance.measures import decision_relevance, game_relevance
from nlmcs.model.manuals import check_unrelated, random_twin, resolve_manual, text_read


@pytest.fixture(scope="module")
def guide():
    return resolve_manual("civ-guide")


@pytest.fixture(scope="module")
def unrelated(guide):
    return text_read(guide, "unrelated")


def test_the_unrelated_control_is_shipped_prose_of_the_manuals_length(guide, unrelated):
    shipped = resolve_manual(UNRELATED_NAME)
    assert len(shipped.sentences) >= 2_500  # longer than the Civ II manual's 1,909
    assert unrelated.name == "civ-guide-unrelated" and is_unrelated(unrelated)
    assert len(unrelated.sentences) == len(guide.sentences)
    assert list(unrelated.sentences["text"]) == \
        list(shipped.sentences["text"][: len(guide.sentences)])
    assert set(unrelated.tokens["sentence_id"]) == set(range(len(guide.sentences)))
    assert unrelated.meta["unrelated"]["of"] == "civ-guide"
    # its own control, and no sentence of the manual in it
    assert text_read(unrelated, "unrelated") is unrelated
    assert not set(unrelated.sentences["text"]) & set(guide.sentences["text"])


def test_a_text_that_speaks_the_manuals_game_words_is_no_control(guide, unrelated):
    check_unrelated(guide, unrelated)  # the shipped prose passes
    for broken in (guide, resolve_manual(random_twin(guide))):
        with pytest.raises(UserInputError, match="game words a sentence"):
            check_unrelated(guide, broken)


def test_a_control_shorter_than_the_manual_is_refused(guide):
    short = dataclasses.replace(guide, name="short",
                                sentences=guide.sentences.iloc[:10].reset_index(drop=True),
                                tokens=guide.tokens[guide.tokens["sentence_id"] < 10])
    with pytest.raises(ManualError, match="must be as long as the manual"):
        unrelated_control(guide, short)


def cli_main(capsys, *args: str) -> tuple[int, str, str]:
    from nlmcs.cli import main

    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_arm_reads_the_control_and_is_refused_in_one_line_where_none_can_be_built(capsys,
                                                                                     tmp_path):
    import json

    log = tmp_path / "decisions.jsonl"
    code, out, err = cli_main(capsys, "play", "--method", "unrelated-text", "--manual",
                              UNRELATED_NAME, "--map", "tiny", "--steps", "1", "--rollouts",
                              "2", "--depth", "2", "--no-progress")
    # the unrelated text's own control would be itself: as game-free as the "manual" it
    # controls, so the game-word check refuses it
    assert code != 0 and "unrelated-text" in err and len(err.strip().splitlines()) == 1
    code, out, err = cli_main(capsys, "play", "--method", "unrelated-text", "--map", "tiny",
                              "--log-decisions", str(log), "--steps",
                              "1", "--rollouts", "2", "--depth", "2", "--no-progress")
    assert code == 0, err
    header = json.loads(log.read_text().splitlines()[0])
    assert header["manual"] == "civ-guide-unrelated"


def test_share_worked_by_hand():
    # text gains 2 over none, keeps 1.5 of it against the control: share 0.75
    text, control, none = [3.0, 3.0, 3.0, 3.0], [1.5, 1.5, 1.5, 1.5], [1.0, 1.0, 1.0, 1.0]
    share, low, high, defined = stats.share_bootstrap(text, control, none, reps=200)
    assert share == pytest.approx(0.75) and low == pytest.approx(0.75)
    assert high == pytest.approx(0.75) and defined == 1.0
    rng = np.random.default_rng(0)
    none = rng.normal(0, 1, 400)
    text = none + 1 + rng.normal(0, 0.5, 400)
    control = none + 0.5 + rng.normal(0, 0.5, 400)
    share, low, high, defined = stats.share_bootstrap(text, control, none, reps=2_000)
    assert low < share < high and 0.3 < share < 0.7 and defined == 1.0


def test_share_is_undefined_where_text_does_not_beat_no_text():
    share, low, high, defined = stats.share_bootstrap([1, 0, 1, 0], [0, 0, 0, 0], [1, 1, 0, 0])
    assert math.isnan(share) and math.isnan(low) and math.isnan(high)
    # text ahead, but not clearly: the ratio's interval is not given
    rng = np.random.default_rng(1)
    none = rng.normal(0, 1, 30)
    share, low, high, defined = stats.share_bootstrap(none + 0.05, none, none - 0.0, reps=500)
    assert share == pytest.approx(1.0)
    share, low, high, defined = stats.share_bootstrap(none + rng.normal(0.05, 1, 30), none,
                                                      none, reps=500)
    assert defined < 0.95 and math.isinf(low)  # unbounded: the gain is not clear of zero
    assert "unbounded" in shares_markdown([dataclasses.replace(
        _share_row(), share_margin=share, share_margin_low=low, share_margin_high=high,
        share_margin_defined=defined)])


def _share_row():
    rows = [_row(a, s, "win" if a == "text" else "loss", m) for s in range(4)
            for a, m in (("text", 2.0), ("random-text", 1.0), ("nonlinear", 0.0))]
    return semantic_shares(rows, ["text", "random-text", "nonlinear"], reps=50)[0]


def _row(arm, seed, outcome, margin, relevance=None):
    row = {"arm": arm, "method": arm, "rollouts": 30, "seed": seed, "outcome": outcome,
           "margin": margin}
    if relevance is not None:
        row["relevance"] = relevance
    return row


def test_the_report_shares_each_control_against_text_and_no_text():
    rows = []
    for s in range(20):
        rows += [_row("text", s, "win", 2.0), _row("random-text", s, "win", 1.0),
                 _row("unrelated-text", s, "loss", 0.0), _row("nonlinear", s, "loss", 0.0)]
    order = ["text", "random-text", "unrelated-text", "nonlinear"]
    shares = semantic_shares(rows, order, reps=200)
    assert [(t.control, t.pairs) for t in shares] == [("random-text", 20),
                                                      ("unrelated-text", 20)]
    twin, other = shares
    assert twin.share_margin == pytest.approx(0.5) and twin.share_win == pytest.approx(0.0)
    assert other.share_margin == pytest.approx(1.0) and other.share_win == pytest.approx(1.0)
    table = shares_markdown(shares, reps=200)
    assert "| text - random-text, over text - nonlinear | 20 |" in table
    # without a no-text arm there is nothing to share
    assert semantic_shares([r for r in rows if r["arm"] != "nonlinear"], order[:3]) == []
    losing = [{**r, "margin": -r["margin"]} if r["arm"] == "text" else r for r in rows]
    assert "undefined" in shares_markdown(semantic_shares(losing, order, reps=200))


def test_meaning_arms_share_against_their_own_controls_and_never_across():
    """text-meaning is shared against its own twin and unrelated prose over nonlinear,
    uct-meaning against its twin's prior over uct; text's twin is not text-meaning's."""
    from nlmcs.methods import text_controls

    assert text_controls("text-meaning") == (["random-text-meaning", "unrelated-text-meaning"],
                                             "nonlinear")
    assert text_controls("uct-meaning") == (["uct-random-meaning"], "uct")
    assert text_controls("uct-text-corpus") == (["uct-random-text-corpus"], "uct-corpus")
    assert text_controls("random-text") is None and text_controls("nonlinear") is None
    rows = []
    for s in range(10):
        rows += [_row("text-meaning", s, "win", 3.0), _row("random-text-meaning", s, "win", 1.0),
                 _row("random-text", s, "loss", 0.0), _row("nonlinear", s, "loss", -1.0),
                 _row("uct-meaning", s, "loss", 2.0), _row("uct-random-meaning", s, "loss", 1.0),
                 _row("uct", s, "loss", 0.0)]
    order = ["text-meaning", "random-text-meaning", "random-text", "nonlinear", "uct-meaning",
             "uct-random-meaning", "uct"]
    shares = semantic_shares(rows, order, reps=100)
    assert [(t.text, t.control, t.none) for t in shares] == [
        ("text-meaning", "random-text-meaning", "nonlinear"),
        ("uct-meaning", "uct-random-meaning", "uct")]
    meaning, prior = shares
    assert meaning.share_margin == pytest.approx(0.5) and prior.share_margin == pytest.approx(0.5)


def test_relevance_of_a_decision_and_a_game():
    uniform = {"num_candidates": 4, "relevance_entropy": 1.0,
               "sentences": [{"id": i, "p": 0.25} for i in range(4)]}
    peaked = {"num_candidates": 4, "relevance_entropy": 0.5,
              "sentences": [{"id": 2, "p": 0.7}, {"id": 0, "p": 0.1}]}
    assert decision_relevance(uniform) == (1.0, 1.0, True)
    assert decision_relevance(peaked) == (0.5, pytest.approx(2.8), False)
    assert decision_relevance({"num_candidates": 1, "sentences": [{"id": 0, "p": 1.0}]}) is None
    game = game_relevance([uniform, peaked, peaked, {"sentences": []}])
    assert game == {"decisions": 3, "entropy": 0.5, "top_lift": 2.8, "uniform_share": 0.3333}
    rows = [_row("text", 0, "win", 1.0, game), _row("text", 1, "win", 1.0,
                                                    game_relevance([uniform])),
            _row("nonlinear", 0, "loss", 0.0)]
    (arm,) = arm_relevance(rows, ["text", "nonlinear"])
    assert (arm.games, arm.decisions) == (2, 4)
    assert arm.entropy == pytest.approx(0.75) and arm.uniform_share == pytest.approx(0.66665)
    assert "| text | 2 | 4 | 0.750 |" in relevance_markdown([arm])


def test_a_manual_cut_by_action_and_state_words(capsys, guide):
    from nlmcs.advice.readability import game_words, sentence_words
    from nlmcs.games import make_game
    from nlmcs.games.civ.labels import vocabulary

    code, out, err = cli_main(capsys, "manual", "cut", "civ-guide")
    assert code == 0, err
    part = resolve_manual("civ-guide-action-state")
    rest = resolve_manual("civ-guide-not-action-state")
    assert len(part.sentences) + len(rest.sentences) == len(guide.sentences)
    actions, states = game_words(vocabulary(make_game("civ").tables))
    assert all(s & actions and s & states for s in sentence_words(part))
    assert not any(s & actions and s & states for s in sentence_words(rest))
    # parts keep the manual's order and parse
    texts = list(guide.sentences["text"])
    ids = [texts.index(t) for t in part.sentences["text"]]
    assert ids == sorted(ids) and part.meta["subset"]["of"] == "civ-guide"
    assert part.meta["counts"]["sentences"] == len(part.sentences)
    assert part.meta["counts"]["words"] < guide.meta["counts"]["words"]
    code, out, err = cli_main(capsys, "manual", "cut", "civ-guide", "--same-size", "3")
    assert code == 0, err
    assert len(resolve_manual("civ-guide-action-state").sentences) == \
        len(resolve_manual("civ-guide-not-action-state").sentences) == \
        min(len(part.sentences), len(rest.sentences))
    # a part never replaces an ingested manual of its name; an empty part is refused
    from manual_pipeline.subset import write_subset

    with pytest.raises(ManualError, match="not a cut part"):
        write_subset(guide, [0, 1], name="civ-guide", rule="test")
    code, out, err = cli_main(capsys, "manual", "cut", "civ-guide-action-state")
    assert code == 2 and "no sentence is left" in err and len(err.strip().splitlines()) == 1
    assert not any("action-state-action-state" in p.name
                   for p in resolve_manual("civ-guide").directory.parent.iterdir())
