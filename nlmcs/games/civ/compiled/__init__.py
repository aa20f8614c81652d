"""The civ engine on arrays, compiled with numba: the fast path of `nlmcs.games.civ`.

The Python engine (`state`, `rules`, `legal`, `cities`, `ai`) stays the reference; every part
built here is checked against it by differential tests (`tests/games/test_civ_compiled.py`,
`tests/games/test_civ_board_state.py`) on games of many seeds, every map preset, the variants
and more than two players. Built: the state as a board of int64 tables (`board`), legal actions
(`legal`), applying actions and combat (`rules`), the end of turn (`turn`), the built-in AI
(`ai`), whole turns of random, uniform roll-out or built-in players in one call (`play`), and
a `State` on a board with the text labels of agents and actions (`labels`, `board_state`),
which the learned searches' roll-outs play on. Corpus recording and decision logs still play
on the Python engine.
"""

from pathlib import Path

from nlmcs.machine_code import drop_stale

_CIV = Path(__file__).parent.parent
drop_stale(Path(__file__).parent, also=(_CIV / "tables.py", _CIV / "variants.py",
                                        _CIV / "labels.py"))
