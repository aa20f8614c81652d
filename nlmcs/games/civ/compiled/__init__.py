"""The civ engine on arrays, compiled with numba: the fast path of `nlmcs.games.civ`.

The Python engine (`state`, `rules`, `legal`, `cities`, `ai`) stays the reference; every part
built here is checked against it by differential tests (`tests/games/test_civ_compiled.py`) on
games of many seeds, every map preset, the variants and more than two players. Built: the state
as a board of int64 tables (`board`), legal actions (`legal`), applying actions and combat
(`rules`), the end of turn (`turn`), and whole turns of random players in one call (`play`),
which is what `nlmcs bench engine` times. Not yet: the built-in AI, and the search, the ablation
runner, corpus recording and self-play still play on the Python engine.
"""

from pathlib import Path

from nlmcs.machine_code import drop_stale

_CIV = Path(__file__).parent.parent
drop_stale(Path(__file__).parent, also=(_CIV / "tables.py", _CIV / "variants.py"))
