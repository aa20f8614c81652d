"""The JSON ruleset: FreeCiv classic numbers, the converter, and bad files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nlmcs.errors import UserInputError
from nlmcs.games.civ.convert import convert_freeciv_ruleset
from nlmcs.games.civ.freeciv_files import parse_secfile
from nlmcs.games.civ.ruleset import RulesetError, load_ruleset
from nlmcs.paths import shipped_dir

CLASSIC = shipped_dir() / "rulesets" / "classic.json"

FREECIV_CLASSIC = Path("/usr/share/games/freeciv/classic")


def test_classic_holds_freeciv_numbers():
    r = load_ruleset(CLASSIC)
    t = {x.name: x for x in r.terrains}
    assert (t["grassland"].food, t["grassland"].shield, t["grassland"].trade) == (2, 0, 0)
    assert t["hills"].defense_pct == 100 and t["mountains"].defense_pct == 200
    assert t["hills"].mining_shield == 3 and t["grassland"].mining_shield == 0
    assert t["mountains"].irrigation_food == 0 and t["plains"].irrigation_time == 5
    assert t["forest"].move_cost == 2 and t["mountains"].move_cost == 3
    phalanx = r.unit("phalanx")
    assert (phalanx.attack, phalanx.defense, phalanx.hp, phalanx.cost) == (1, 2, 10, 20)
    assert r.unit("settlers").pop_cost == 1
    p = r.params
    assert p["granary_food_ini"] == 20 and p["city_radius_sq"] == 5
    assert p["river_defense_pct"] == 50 and p["fortified_defense_pct"] == 50
    assert p["veteran_power_pct"] == [100, 150, 175, 200]
    assert "wheat" in t["plains"].resources and "coal" in t["hills"].resources
    assert len(r.sha256) == 64


@pytest.mark.skipif(not FREECIV_CLASSIC.is_dir(), reason="FreeCiv data not installed")
def test_converter_reproduces_the_shipped_ruleset():
    data = convert_freeciv_ruleset(FREECIV_CLASSIC, name="classic")
    shipped = json.loads(CLASSIC.read_text())
    assert data == shipped


def _write(tmp_path, data) -> Path:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d["terrains"][0].pop("food"), "missing key 'food'"),
        (lambda d: d["units"][0].update(colour=3), "unknown key 'colour'"),
        (lambda d: d["units"][2].update(cost=-10), "negative"),
        (lambda d: d["terrains"][3].update(name="lava"), "unknown terrain 'lava'"),
        (lambda d: d["params"].pop("granary_food_ini"), "missing key 'granary_food_ini'"),
        (lambda d: d["units"][0].update(tech="rocketry"), "unknown tech 'rocketry'"),
        (lambda d: d.update(format="other/9"), "format"),
    ],
)
def test_bad_ruleset_is_one_clear_error(tmp_path, mutate, message):
    data = json.loads(CLASSIC.read_text())
    mutate(data)
    path = _write(tmp_path, data)
    with pytest.raises(RulesetError) as err:
        load_ruleset(path)
    assert message in str(err.value)
    assert str(path) in str(err.value)


def test_ruleset_not_json_or_missing(tmp_path):
    path = tmp_path / "x.json"
    path.write_bytes(b"\x00\x01 not json")
    with pytest.raises(RulesetError, match="not a JSON ruleset"):
        load_ruleset(path)
    with pytest.raises(RulesetError, match="not found"):
        load_ruleset(tmp_path / "missing.json")


def test_secfile_parser_reports_line_numbers(tmp_path):
    path = tmp_path / "bad.ruleset"
    path.write_text('[a]\nx = 1, 2\ny = "unterminated\n')
    with pytest.raises(UserInputError, match=r"bad.ruleset:3: unterminated string"):
        parse_secfile(path)
    good = tmp_path / "good.ruleset"
    good.write_text(
        '[s]\nname = _("Hi")\nlist = "a", "b",\n  "c"\nt =\n  { "k", "v"\n "x", 1\n }\n'
    )
    parsed = parse_secfile(good)
    assert parsed["s"] == {"name": "Hi", "list": ["a", "b", "c"], "t": [{"k": "x", "v": 1}]}


@pytest.mark.skipif(not FREECIV_CLASSIC.is_dir(), reason="FreeCiv data not installed")
def test_the_shipped_monarchy_ruleset_is_classic_under_monarchy():
    data = convert_freeciv_ruleset(FREECIV_CLASSIC, name="classic-monarchy",
                                   government="Monarchy")
    assert data == json.loads((shipped_dir() / "rulesets" / "classic-monarchy.json").read_text())
    despot = json.loads(CLASSIC.read_text())["params"]
    changed = {k: (despot[k], v) for k, v in data["params"].items() if despot[k] != v}
    assert changed == {"tile_penalty_above": (2, 0), "corruption_pct": (37, 15),
                       "corruption_per_distance": (400, 200), "martial_law_max": (100, 3),
                       "science_pct": (60, 70)}
    with pytest.raises(UserInputError, match="no government 'Tyranny'; choose from anarchy"):
        convert_freeciv_ruleset(FREECIV_CLASSIC, government="Tyranny")
