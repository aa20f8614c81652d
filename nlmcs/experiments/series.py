"""Series of games between two scripted players, one CSV row per game.

`play_matches` alternates sides every game (so neither player always moves first or keeps the
same start) and writes the CSV atomically at the end. Library side of `nlmcs game series`.
"""

from __future__ import annotations

import csv
import io
import math
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from nlmcs.games.base import Game
from nlmcs.games.runner import play_game

CSV_FIELDS = ("game", "seed", "player0", "player1", "winner", "winner_name", "turns", "score0",
              "score1", "cities0", "cities1", "units0", "units1")


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
                 seed: int = 0, out: str | Path | None = None, progress=None) -> MatchSummary:
    """Game k is played from seed + k with sides swapped on odd k."""
    rows = []
    wins = {players[0]: 0, players[1]: 0}
    draws = 0
    for k in range(games):
        order = players if k % 2 == 0 else (players[1], players[0])
        pols = {0: game.policy(order[0]), 1: game.policy(order[1])}
        r = play_game(game, pols, seed=seed + k, max_turns=turns)
        name = order[r.winner] if r.winner is not None else ""
        if name:
            wins[name] += 1
        else:
            draws += 1
        count = {f"{key}{p}": int(r.stats[p].get(key, 0)) for p in (0, 1)
                 for key in ("cities", "units")}
        rows.append({
            "game": k, "seed": seed + k, "player0": order[0], "player1": order[1],
            "winner": "" if r.winner is None else r.winner, "winner_name": name, "turns": r.turns,
            "score0": round(r.scores[0], 2), "score1": round(r.scores[1], 2), **count,
        })  # fmt: skip
        if progress is not None:
            progress(k + 1, games)
    path = None
    if out is not None:
        path = Path(out)
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=CSV_FIELDS)
        writer.writeheader()
        writer.writerows(rows)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(buf.getvalue())
        os.replace(tmp, path)
    return MatchSummary(games=games, wins=wins, draws=draws, csv_path=path)
