"""Variant games' manuals and ablations: the rule sentence, the mismatched control, the oracles."""

import json

import pytest

from nlmcs.cli import main
from nlmcs.errors import UserInputError
from nlmcs.experiments.ablation.spec import AblationSpec
from nlmcs.games import make_game
from nlmcs.games.civ.variants import SACRED, SACRED_END
from nlmcs.model.manuals import resolve_manual
from nlmcs.model.variant_manuals import RULE_SECTION, game_manual, game_rule, text_for_game

TERRAINS = ("grassland", "plains", "desert", "tundra", "forest", "hills", "mountains", "swamp",
            "jungle")


def _named(text: str) -> set[str]:
    words = {w.strip(".,:;").lower() for w in text.split()}
    return {t for t in TERRAINS if t in words}


@pytest.fixture(scope="module")
def guide():
    return resolve_manual("civ-guide")


@pytest.mark.parametrize("variant", [SACRED, SACRED_END])
def test_game_manual_is_the_guide_plus_one_sentence_naming_the_sacred_terrain(guide, variant):
    game = make_game("civ", preset="small", variant=variant)
    for seed in (0, 1, 5):
        m = game_manual(guide, game, seed)
        sacred = game.tables.terrain_names[game.map_for_seed(seed)[0].sacred]
        assert len(m.sentences) == len(guide.sentences) + 1
        assert m.sentences.iloc[:-1].equals(guide.sentences)
        assert m.tokens.iloc[: len(guide.tokens)].equals(guide.tokens)
        last = m.sentences.iloc[-1]
        assert last["section"] == RULE_SECTION and _named(last["text"]) == {sacred}
        extra = m.tokens.iloc[len(guide.tokens):]
        assert set(extra["sentence_id"]) == {len(guide.sentences)}
        assert sacred in set(extra["lower"])
        assert (extra["head"] < len(extra)).all()


def test_mismatched_manual_names_another_terrain_in_the_same_words(guide):
    game = make_game("civ", preset="small", variant=SACRED)
    for seed in range(6):
        right, wrong = game_rule(game, seed), game_rule(game, seed, mismatched=True)
        assert wrong.terrain != right.terrain and wrong.sacred == right.sacred
        assert wrong.paraphrase == right.paraphrase
        assert right.sentence.replace(right.terrain, "T") == wrong.sentence.replace(wrong.terrain,
                                                                                    "T")
        m = text_for_game(guide, game, seed, "mismatched")
        assert _named(m.sentences.iloc[-1]["text"]) == {wrong.terrain}
    twin = text_for_game(guide, game, 2, "random-twin")
    assert twin.name.startswith(game_manual(guide, game, 2).name) and twin.name.endswith("-2")
    assert len(twin.tokens) == len(game_manual(guide, game, 2).tokens)
    with pytest.raises(UserInputError, match="needs a variant"):
        text_for_game(guide, make_game("civ", preset="small"), 0, "mismatched")


def test_manual_show_prints_the_rule_and_the_sacred_terrain(capsys):
    assert main(["manual", "show", "--variant", SACRED_END, "--seed", "7", "--map", "small"]) == 0
    out = capsys.readouterr().out
    rule = game_rule(make_game("civ", preset="small", variant=SACRED_END), 7)
    assert f"sacred terrain {rule.sacred}" in out and rule.sentence in out


def test_variant_is_in_the_identity_and_mismatched_needs_one():
    plain = AblationSpec(methods=("oracle",), rollouts=(2,), games=1, seed=0, steps=2,
                         game_options={"preset": "small"})
    sacred = AblationSpec(methods=("oracle",), rollouts=(2,), games=1, seed=0, steps=2,
                          game_options={"preset": "small", "variant": SACRED})
    assert plain.fingerprint() != sacred.fingerprint() and sacred.variant == SACRED
    with pytest.raises(UserInputError, match="text-mismatched .* needs a variant"):
        AblationSpec(methods=("text-mismatched",), rollouts=(2,), games=1, seed=0, steps=2)


def test_tiny_variant_ablation_stores_foundings_and_reports_them(tmp_path, capsys):
    out = tmp_path / "run"
    args = ["ablation", "run", "--variant", SACRED, "--methods", "oracle,oracle-blind,text,"
            "text-mismatched", "--map", "small", "--max-turns", "12", "--full-games",
            "--games", "2", "--rollouts", "2", "--depth", "1", "--workers", "1",
            "--opponent", "builtin:normal", "--no-progress", "--out", str(out)]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "rule variant sacred-terrain" in text and "| oracle vs oracle-blind | 2 |" in text
    assert "Foundings on the sacred terrain" in text
    rows = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    assert len(rows) == 8
    for r in rows:
        f = r["foundings"]
        assert f["cities"] >= 1 and 0 <= f["sacred"] <= f["cities"]
        assert f["terrain"] in TERRAINS and isinstance(f["sacred_reachable"], bool)
        assert r["config"]["game_options"]["variant"] == SACRED
    by = {(r["arm"], r["game"]): r for r in rows}
    for i in range(2):
        assert by[("oracle", i)]["foundings"]["sacred"] >= 1  # the oracle goes for it
        text_manual = by[("text", i)]["config"]["manual"]["name"]
        wrong_manual = by[("text-mismatched", i)]["config"]["manual"]["name"]
        assert f".{by[('text', i)]['foundings']['terrain']}." in text_manual
        assert text_manual != wrong_manual
    assert "sacred" in (out / "foundings.csv").read_text().splitlines()[0]
