"""The civ engine on arrays, compiled with numba: the fast path of `nlmcs.games.civ`.

The Python engine (`state`, `rules`, `legal`, `cities`, `ai`) stays the reference; every part
built here is checked against it by differential tests (`tests/games/test_civ_compiled.py`) on
games of many seeds and every map preset. Built so far: the array form of a state
(`arrays.StateArrays`, from a `CivState`) and every agent's legal actions (`legal`). Not yet:
applying actions, the end of turn, combat, the built-in AI; until they are, the search and the
game runner use the Python engine (issue "The engine at compiled speed").
"""
