"""The text reader: what it reads, what it advises, its model file, and where it plays."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from toy_game import make_manual

from nlmcs.errors import UserInputError
from nlmcs.games import make_game
from nlmcs.reader.forward import build_query, collate
from nlmcs.reader.index import ReaderIndex, manual_identity
from nlmcs.reader.prior import TextPrior
from nlmcs.reader.weights import check_fits, default_model, load_model, model_from, net_for

GAME = make_game("civ", preset="small", max_turns=10)
VOCAB = GAME.label_vocabulary()
ACTIONS = [("build city",), ("build road",), ("fortify",), ("move", "north", "hills")]


def prior_of(texts, *, model=None):
    index = ReaderIndex.build(make_manual(texts), VOCAB)
    return TextPrior(index, model or default_model())


def p_of(prior, state=("grassland",), agent=("settlers",), actions=ACTIONS):
    return prior.distribution((agent, tuple(state), tuple(actions)))


def test_a_sentence_advising_a_move_raises_its_prior_and_a_negated_one_lowers_it():
    uniform = 1 / len(ACTIONS)
    advised = p_of(prior_of(["Settlers build city on grassland."]))
    assert advised.sum() == pytest.approx(1.0)
    assert advised[0] == advised.max() and advised[0] > uniform + 0.1
    warned = p_of(prior_of(["Settlers never build city on grassland."]))
    assert warned[0] < uniform


def test_the_sentence_describing_the_agents_state_wins_the_relevance():
    prior = prior_of(["Settlers build city on grassland.", "Settlers build road on hills."])
    on_grass, on_hills = p_of(prior, ("grassland",)), p_of(prior, ("hills",))
    assert on_grass[0] > on_grass[1] and on_hills[1] > on_hills[0]


def test_an_agent_the_manual_never_names_gets_a_uniform_prior():
    p = p_of(prior_of(["Settlers build city on grassland."]), agent=("warriors",))
    assert np.allclose(p, 1 / len(ACTIONS))


def test_one_batch_of_questions_answers_as_each_alone():
    prior = prior_of(["Settlers build city on grassland.", "Workers irrigate grassland."])
    keys = [(("settlers",), ("grassland",), tuple(ACTIONS)),
            (("workers",), ("grassland", "river"), (("irrigate",), ("mine",), ("wait",)))]
    queries = [build_query(prior.index, *k) for k in keys]
    with torch.no_grad():
        together, _ = prior.net(collate(queries))
        alone = [prior.net(collate([q]))[0] for q in queries]
    assert torch.allclose(together, torch.cat(alone), atol=1e-6)


def test_the_twins_index_differs_in_words_only():
    manual = make_manual(["Settlers build city on grassland.", "Workers irrigate hills."])
    from manual_pipeline.shuffle import shuffle_tokens

    twin_tokens = shuffle_tokens(manual.tokens, seed=3)
    twin = type(manual)("toy-random", manual.directory, {"name": "toy-random",
                        "random": {"source_sha256": "x"}}, manual.sentences, twin_tokens)
    a, b = ReaderIndex.build(manual, VOCAB), ReaderIndex.build(twin, VOCAB)
    assert manual_identity(twin)["twin"] and not manual_identity(manual)["twin"]
    assert manual_identity(twin)["content_sha256"] != manual_identity(manual)["content_sha256"]
    assert sorted(a.stems) == sorted(b.stems)  # the same words, in other places


def test_a_model_file_round_trips_and_names_every_weight(tmp_path):
    prior = prior_of(["Settlers build city on grassland."])
    model = model_from(prior.net, prior.index.feature_names, manual=None, game=None)
    path = tmp_path / "reader.json"
    path.write_text(json.dumps({**model, "training": None}))
    loaded = load_model(path)
    assert "pos=VERB" in loaded["labels"] and set(loaded["advice"]) >= {"action-words"}
    again = net_for(loaded, prior.index.feature_names)
    for a, b in zip(again.parameters(), prior.net.parameters(), strict=True):
        assert torch.allclose(a, b, atol=1e-5)


@pytest.mark.parametrize("content, message", [
    ("[]", "expected a JSON object"),
    ('{"format": "other"}', "not a reader file"),
    ('{"format": "nlmcs-reader/1", "labels": {"x": [1, 2]}, "label_bias": [0, 0, 0], '
     '"relevance": {}, "advice": {}}', "'labels' must map"),
    ('{"format": "nlmcs-reader/1", "labels": {}, "label_bias": [0, 0, 0], '
     '"relevance": {"nonsense": 1}, "advice": {}}', "'relevance' must map"),
])
def test_a_bad_reader_file_is_one_line_naming_it(tmp_path, content, message):
    path = tmp_path / "reader.json"
    path.write_text(content)
    with pytest.raises(UserInputError, match=message) as err:
        load_model(path)
    assert str(path) in str(err.value) and "\n" not in str(err.value)


def test_a_reader_is_refused_for_another_manual_or_the_twin_side():
    model = {**default_model(), "path": "r.json",
             "manual": {"name": "civ-guide", "source_sha256": "aaa", "twin": False}}
    check_fits(model, {"name": "civ-guide", "source_sha256": "aaa", "twin": False}, GAME)
    with pytest.raises(UserInputError, match="trained on manual 'civ-guide', not 'other'"):
        check_fits(model, {"name": "other", "source_sha256": "bbb", "twin": False}, GAME)
    with pytest.raises(UserInputError, match="is a twin"):
        check_fits(model, {"name": "civ-guide-random", "source_sha256": "aaa", "twin": True},
                   GAME)
    other_game = {**model, "game": {"name": "civ", "ruleset": "civ2civ3",
                                    "ruleset_sha256": None}}
    with pytest.raises(UserInputError, match="another game"):
        check_fits(other_game, {"name": "civ-guide", "source_sha256": "aaa", "twin": False},
                   GAME)
