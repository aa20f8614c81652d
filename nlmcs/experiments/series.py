"""Series of games between two scripted players, one CSV row per game.

`play_matches` alternates sides every game (so neither player always moves first or keeps the
same start) and rewrites the CSV atomically after every game, so an interrupt or a kill keeps
every finished game. Library side of `nlmcs game series`.
"""

from __future__ import annotations

import csv
import io
import logging
import math
from dataclasses import dataclass
from pathlib import Path

from nlmcs.files import write_atomic
from nlmcs.games.base import Game
from nlmcs.games.runner import play_game
from nlmcs.methods import opponent_policy
from nlmcs.seeds import CHANCE_RULE, game_seed

notice = logging.getLogger("nlmcs.notice")

CSV_FIELDS = ("game", "seed", "player0", "player1", "winner", "winner_name", "turns", "score0",
              "score1", "cities0", "cities1", "units0", "units1", "chance")
"""`chance` names the rule of the game's chance (`nlmcs.seeds`); a table without the column
was played by the legacy rule (game k from seed + k, chance from `default_rng`)."""


@dataclass
class MatchSummary:
    games: int
    wins: dict[str, int]
    draws: int
    csv_path: Path | None

    def win_rate(self, name: str) -> tuple[float, float]:
        """Win share of `name` and its standard error."""
        p = self.wins.get(name, 0) / max(1, self.games)
        return p, math.sqrt(p * (1 - p) / max(1, self.games))


def play_matches(*, game: Game, players: tuple[str, str], games: int, turns: int,
                 seed: int = 0, out: str | Path | None = None, progress=None,
                 engine: str = "compiled") -> MatchSummary:
    """Game k is played from `game_seed(seed, k)` with sides swapped on odd k, on `engine`
    (`runner.play_game`)."""
    rows: list[dict] = []
    wins = {players[0]: 0, players[1]: 0}
    draws = 0
    path = Path(out) if out is not None else None
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
    try:
        for k in range(games):
            draws += _play_one(game, players, k, seed, turns, rows, wins, engine)
            if path is not None:
                _write_csv(path, rows)
            if progress is not None:
                progress(k + 1, games)
    except KeyboardInterrupt:
        if path is not None:
            _write_csv(path, rows)  # the interrupt may have landed while the last row was written
            notice.info("interrupted after %d of %d games; their rows are in %s", len(rows),
                        games, path)
        raise
    return MatchSummary(games=games, wins=wins, draws=draws, csv_path=path)


def _play_one(game: Game, players: tuple[str, str], k: int, seed: int, turns: int,
              rows: list[dict], wins: dict[str, int], engine: str) -> int:
    """Play game k, add its row and its winner's win; returns 1 for a draw, else 0."""
    order = players if k % 2 == 0 else (players[1], players[0])
    pols = {0: opponent_policy(game, order[0]), 1: opponent_policy(game, order[1])}
    r = play_game(game, pols, seed=game_seed(seed, k), max_turns=turns, engine=engine)
    name = order[r.winner] if r.winner is not None else ""
    if name:
        wins[name] += 1
    count = {f"{key}{p}": int(r.stats[p].get(key, 0)) for p in (0, 1)
             for key in ("cities", "units")}
    rows.append({
        "game": k, "seed": game_seed(seed, k), "player0": order[0], "player1": order[1],
        "winner": "" if r.winner is None else r.winner, "winner_name": name, "turns": r.turns,
        "score0": round(r.scores[0], 2), "score1": round(r.scores[1], 2), **count,
        "chance": CHANCE_RULE,
    })  # fmt: skip
    return 0 if name else 1


def _write_csv(path: Path, rows: list[dict]) -> None:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=CSV_FIELDS)
    writer.writeheader()
    writer.writerows(rows)
    write_atomic(path, buf.getvalue())
