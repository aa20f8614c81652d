"""The one seed tree: every seed a command derives comes from `game_seed`, and a game's chance
from `chance_rng`.

`game_seed(run_seed, *salt)` hashes (run seed, salt...) through numpy's `SeedSequence` into
[0, 2**31): game i of an ablation, of the advice audit, of corpus recording and of `game series`
is `game_seed(S, i)` for every method (the pairing of arms depends on it), generation g's
self-play game i is `game_seed(S, g, i)`, and a job that must share no game with those salts its
path (the reader's labelled games `game_seed(S, SALT, i)`, the network's judging games
`game_seed(S, 0x5EED, i)`). Nearby run seeds share no games, unlike `S + i`.

`chance_rng(game_seed)` is the chance of one game's own moves and events (combat, huts) in
every played game: `SeedSequence([game_seed, 1])`, apart from the stream that made the map
(`CHANCE_RULE`). Runs stored before the rule was one (the advice audit's folders, recorded
corpora: their identity or log header names no rule) drew it from `default_rng(game_seed)`
(`LEGACY_CHANCE`); they replay with theirs through `chance_rng(seed, rule)`. The browser's
games, whose turns are driven by requests and resumed from their logs, draw turn t's chance
from `turn_rng(seed, t)` (`TURN_CHANCE`), so a resumed game goes on as it would have.
"""

from __future__ import annotations

import numpy as np

CHANCE_RULE = "seedsequence-1"  # SeedSequence([game seed, 1])
LEGACY_CHANCE = "default-rng"  # default_rng(game seed): what unnamed stored runs used
TURN_CHANCE = "per-turn-2"  # SeedSequence([game seed, 2, turn]): the browser's games
CHANCE_RULES = (CHANCE_RULE, LEGACY_CHANCE)  # the rules play_game replays
NAMED_RULES = (*CHANCE_RULES, TURN_CHANCE)  # every rule a stored log may name


def game_seed(run_seed: int, *salt: int) -> int:
    """A seed in [0, 2**31) for the game at `salt` (its index, or a path such as generation and
    index) of a run with seed `run_seed`."""
    sequence = np.random.SeedSequence([int(run_seed), *(int(s) for s in salt)])
    return int(sequence.generate_state(1, np.uint32)[0] >> 1)


def chance_rng(seed: int, rule: str = CHANCE_RULE) -> np.random.Generator:
    """The chance of the game played from `seed` (its map comes from `seed` itself), by `rule`
    (one of `CHANCE_RULES`; a stored run names the one it was played with)."""
    if rule == CHANCE_RULE:
        return np.random.default_rng(np.random.SeedSequence([int(seed), 1]))
    if rule == LEGACY_CHANCE:
        return np.random.default_rng(int(seed))
    raise ValueError(f"unknown chance rule {rule!r} (known: {', '.join(CHANCE_RULES)})")


def turn_rng(seed: int, turn: int) -> np.random.Generator:
    """The chance of turn `turn` of a browser game played from `seed` (`TURN_CHANCE`)."""
    return np.random.default_rng(np.random.SeedSequence([int(seed), 2, int(turn)]))


def stored_rule(value: object) -> str:
    """The chance rule a stored run or log names: none named (missing, empty, a table's NaN)
    means the legacy rule."""
    return str(value) if isinstance(value, str) and value else LEGACY_CHANCE
