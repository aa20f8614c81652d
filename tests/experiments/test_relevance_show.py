"""`nlmcs relevance show`: the terminal view on every kind of agent, colours only when asked (or
on a terminal), and one clear line for logs it cannot show."""

from __future__ import annotations

import json

import pytest
from relevance_records import AGENTS, SENTENCES, records, write

from nlmcs.cli import main
from nlmcs.experiments.relevance.views import mark_words

ESC = "\x1b["


def _show(capsys, *argv) -> tuple[int, str, str]:
    code = main(["relevance", "show", *map(str, argv)])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("agent", AGENTS, ids=[a[1][0] for a in AGENTS])
def test_show_every_kind_of_agent(agent, tmp_path, capsys):
    log = write(tmp_path / "d.jsonl", records())
    ident, labels, action, state, top, _ = agent
    for pick in (ident, labels[0]):  # by id and by kind
        code, out, _ = _show(capsys, log, "--agent", pick, "--step", 1, "-k", 2)
        assert code == 0
        blocks = out.split("\n\n")[1:]
        assert len(blocks) == 1 and "step 1" in blocks[0] and ident in blocks[0]
        assert f"chose: {action[0]}" in blocks[0] and f"state: {', '.join(state)}" in blocks[0]
        assert SENTENCES[top] in blocks[0] and "0.5000" in blocks[0]
        assert f"sampled #{top}:" in blocks[0]
        assert ESC not in out  # not a terminal: plain


def test_plain_marks_words_and_colour_is_ansi(tmp_path, capsys):
    log = write(tmp_path / "d.jsonl", records(steps=1))
    code, out, _ = _show(capsys, log, "--agent", "settlers")
    assert code == 0
    assert "[Settlers]S should [build]A a [city]A beside a [river]S." in out
    code, out, _ = _show(capsys, log, "--agent", "settlers", "--color", "always")
    assert code == 0
    assert f"{ESC}1;33mbuild{ESC}0m" in out and f"{ESC}1;36mriver{ESC}0m" in out
    assert "[build]A" not in out


def test_show_a_real_game_log_whole(text_game, capsys):
    log, _ = text_game
    decisions = [json.loads(x) for x in log.read_text().splitlines()]
    decisions = [r for r in decisions if "record" not in r]
    code, out, err = _show(capsys, log, "-k", 3)
    assert code == 0 and not err
    blocks = out.split("\n\n")[1:]
    assert len(blocks) == len(decisions)
    for rec, block in zip(decisions, blocks, strict=True):
        assert block.startswith(f"step {rec['step']} ") and rec["agent"] in block
        for s in rec["sentences"][:3]:
            assert (s["text"] or "NULL (no sentence)") in block
        if rec.get("sampled_text"):
            for piece, label in mark_words(rec["sampled_text"], word_labels=rec["word_labels"]):
                if label is not None:
                    assert f"[{piece}]{label[0].upper()}" in block


def test_mark_words_skips_background_and_unmatched_words():
    pieces = mark_words("Settlers don't build cities, ever.",
                        word_labels=[["settler", "state"], ["build", "background"],
                                     ["citi", "action"]])
    assert pieces[0] == ("Settlers", "state")
    assert ("cities", "action") in pieces
    assert "".join(p for p, _ in pieces) == "Settlers don't build cities, ever."


def test_nothing_matching_is_one_line(tmp_path, capsys):
    log = write(tmp_path / "d.jsonl", records())
    code, _, err = _show(capsys, log, "--step", 9)
    assert code == 2 and err.count("\n") == 1 and "no decision at step 9" in err
    code, _, err = _show(capsys, log, "--agent", "catapult")
    assert code == 2 and "agent 'catapult'" in err and "steps 0-1" in err


def test_every_view_says_when_relevance_is_uniform_and_shows_ties(tmp_path, capsys):
    # issue 55: a uniform decision ranked to four decimals looks like a choice; say it is not
    import json

    from nlmcs.cli import main
    from nlmcs.experiments.relevance.measures import relevance_verdict, tied

    uniform = {"num_candidates": 4, "relevance_entropy": 1.0,
               "sentences": [{"id": i, "p": 0.25, "text": f"s{i}"} for i in range(4)]}
    peaked = {"num_candidates": 4, "relevance_entropy": 0.5,
              "sentences": [{"id": 0, "p": 0.7, "text": "a"}, {"id": 1, "p": 0.1, "text": "b"}]}
    assert relevance_verdict(uniform).startswith("uniform: no sentence is preferred")
    assert relevance_verdict(peaked).startswith("not uniform: the top sentence is 2.80x")
    assert tied(uniform["sentences"]) == [False, True, True, True]
    log = tmp_path / "d.jsonl"
    assert main(["play", "--method", "text", "--map", "tiny", "--steps", "1", "--rollouts", "3",
                 "--depth", "2", "--no-progress", "--log-decisions", str(log), "--report",
                 str(tmp_path / "d.html")]) == 0
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert any(relevance_verdict(r) and relevance_verdict(r).startswith("uniform")
               for r in records)  # the default model's relevance is uniform (docs/reading.md)
    capsys.readouterr()
    assert main(["relevance", "show", str(log), "--step", "0"]) == 0
    out = capsys.readouterr().out
    assert "uniform: no sentence is preferred" in out and "\n  = " in out
    assert "uniform: no sentence is preferred" in (tmp_path / "d.html").read_text()


def test_uniform_or_tied_decisions_rank_no_sentence_first():
    from relevance_records import records

    from nlmcs.experiments.relevance.log import DecisionLog
    from nlmcs.experiments.relevance.summary import sentence_use

    recs = records(1)  # five decisions, each peaked on its own sentence
    flat = [{**recs[0], "relevance_entropy": 1.0,
             "sentences": [{"id": i, "p": 0.25, "text": f"s{i}"} for i in (3, 7, 9, 11)]}]
    tie = [{**recs[1], "relevance_entropy": 0.9,
            "sentences": [{"id": 9, "p": 0.4, "text": "a"}, {"id": 11, "p": 0.4, "text": "b"},
                          {"id": 3, "p": 0.2, "text": "c"}]}]
    ranked = sentence_use(DecisionLog(path=None, decisions=recs + flat + tie))
    assert (ranked.decisions, ranked.uniform, ranked.tied) == (7, 1, 1)
    first = {u.id: u.top for u in ranked.uses}
    assert first[3] == 1 and first[9] == 1 and first[11] == 1  # only the peaked decisions
    assert sum(first.values()) == 5


def test_heatmaps_share_one_colour_scale_whatever_their_values(monkeypatch):
    import numpy as np
    from matplotlib.axes import Axes

    from nlmcs.experiments.relevance import plots
    from nlmcs.experiments.relevance.measures import Grid

    seen = []
    real = Axes.imshow

    def spy(self, values, **kwargs):
        seen.append((kwargs["norm"].vmin, kwargs["norm"].vmax, np.ma.filled(values, np.nan)))
        return real(self, values, **kwargs)

    monkeypatch.setattr(Axes, "imshow", spy)
    for values in ([[0.96, 1.04]], [[0.2, 6.0]]):
        grid = Grid(unit="city", sentences=[3], texts=["a"], steps=[0, 1], values=np.array(values),
                    decisions=2)
        plots.grid_plot(grid, title="t")
    limit = np.log2(plots.RATIO_LIMIT)
    assert [(lo, hi) for lo, hi, _ in seen] == [(-limit, limit)] * 2
    # 4% off uniform is a faint colour (under 2% of the scale), not the scale's end
    assert np.abs(seen[0][2]).max() / limit < 0.02
    assert np.isclose(seen[1][2][0, 1], np.log2(6.0))
