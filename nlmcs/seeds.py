"""The one seed tree: every seed a command derives comes from `game_seed`, and a game's chance
from `chance_rng`.

`game_seed(run_seed, *salt)` hashes (run seed, salt...) through numpy's `SeedSequence` into
[0, 2**31): game i of an ablation or of the advice audit is `game_seed(S, i)` for every method
(the pairing of arms depends on it), generation g's self-play game i is `game_seed(S, g, i)`, and
a job that must share no game with those salts its path (the reader's labelled games
`game_seed(S, SALT, i)`, the network's judging games `game_seed(S, 0x5EED, i)`). Nearby run seeds
share no games, unlike `S + i`.

`chance_rng(game_seed)` is the chance of one game's own moves and events (combat, huts) in a
played game, in self-play and in the environments: `SeedSequence([game_seed, 1])`, apart from
the stream that made the map. `nlmcs.games.runner.play_game` still defaults to
`default_rng(seed)` when it is given no rng (the advice audit, corpus recording, `game series`);
moving those to `chance_rng` changes their games and needs their stored runs to record the rule.
"""

from __future__ import annotations

import numpy as np


def game_seed(run_seed: int, *salt: int) -> int:
    """A seed in [0, 2**31) for the game at `salt` (its index, or a path such as generation and
    index) of a run with seed `run_seed`."""
    sequence = np.random.SeedSequence([int(run_seed), *(int(s) for s in salt)])
    return int(sequence.generate_state(1, np.uint32)[0] >> 1)


def chance_rng(seed: int) -> np.random.Generator:
    """The chance of the game played from `seed` (its map comes from `seed` itself)."""
    return np.random.default_rng(np.random.SeedSequence([int(seed), 1]))
