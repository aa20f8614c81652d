"""The ruleset converter's reader of FreeCiv files sits on the one section-file parser
(`nlmcs.secfile`, shared with the manual pipeline): a file cut off anywhere is one line naming
the file and line, never a traceback, and both readers read the same entries."""

from __future__ import annotations

from pathlib import Path

import pytest

from manual_pipeline.freeciv import parse_section_file
from nlmcs.cli import main
from nlmcs.errors import UserInputError
from nlmcs.games.civ.freeciv_files import parse_secfile

CLASSIC = Path("/usr/share/games/freeciv/classic")


@pytest.mark.parametrize(("text", "message"), [
    ("[a]\nx = 1,\n", "bad.ruleset:2: file ends after ','"),
    ("[a]\nx =\n", "bad.ruleset:2: missing value after '='"),
    ('[a]\nt = { "a"\n 1\n', "bad.ruleset:2: unterminated table '{'"),
    ('[a]\nx = _("s"\n', "bad.ruleset:2: expected ')' to close"),
])  # fmt: skip
def test_a_cut_off_file_is_one_clear_line(tmp_path, text, message):
    path = tmp_path / "bad.ruleset"
    path.write_text(text)
    with pytest.raises(UserInputError) as err:
        parse_secfile(path)
    assert str(err.value).startswith(f"{tmp_path}/{message}")


def test_convert_ruleset_reports_a_cut_off_file_in_one_line(tmp_path, capsys):
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "terrain.ruleset").write_text('[parameters]\nmove_fragments = 3,\n')
    assert main(["game", "convert-ruleset", str(rules), "--out", str(tmp_path / "x.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {rules}/terrain.ruleset:2: file ends after ','"]


def test_both_readers_read_the_same_values(tmp_path):
    path = tmp_path / "units.ruleset"
    path.write_text('[unit_warriors]\nname = _("?unit:Warriors")\nflags = "a",\n  "b"\n'
                    'help = "one\\ntwo"\nratio = 1.5\nreqs =\n  { "type", "name"\n'
                    '    "Tech", "Bronze Working"\n  }\n')
    entries = {e.key: e.values for e in parse_section_file(path.read_text().splitlines())}
    body = parse_secfile(path)["unit_warriors"]
    assert body == {"name": "Warriors", "flags": ["a", "b"], "help": "one\ntwo", "ratio": 1.5,
                    "reqs": [{"type": "Tech", "name": "Bronze Working"}]}
    assert [body[k] for k in ("name", "flags", "help", "ratio")] == [
        entries["name"][0], entries["flags"], entries["help"][0], entries["ratio"][0]]


@pytest.mark.skipif(not CLASSIC.is_dir(), reason="FreeCiv data not installed")
def test_every_installed_classic_file_reads_alike():
    for path in sorted(CLASSIC.glob("*.ruleset")):
        body = parse_secfile(path)
        for e in parse_section_file(path.read_text(encoding="utf-8").splitlines(), path=path):
            value = body[e.section][e.key]
            if not any(isinstance(v, list) for v in e.values):  # tables are shaped as dicts
                assert value == (e.values[0] if len(e.values) == 1 else e.values), (path, e)
