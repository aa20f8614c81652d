"""Map pictures of the states a decision log holds, drawn by the engine's PNG renderer.

The log's game record names the game and its configuration; each state record is the game's own
JSON of the state (`Game.state_from_json` reads it back). Only the civ game has a PNG renderer
(`nlmcs.games.civ.render_png`); for other games, or logs without states, there are no pictures.
"""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path

from nlmcs.errors import UserInputError
from nlmcs.experiments.relevance.log import DecisionLog

log = logging.getLogger(__name__)


def map_pictures(decisions: DecisionLog, *, every: int = 1) -> dict[int, bytes]:
    """PNG bytes of the state at every `every`-th logged step (and the final state), by step;
    empty when the log holds no states or the game has no renderer."""
    header = decisions.header
    if not decisions.states or header is None or header.get("game") != "civ":
        return {}
    from nlmcs.games.civ import CivConfig, CivGame
    from nlmcs.games.civ.render_png import render_png

    try:
        game = CivGame(CivConfig(**(header.get("game_config") or {})))
    except (TypeError, UserInputError) as err:
        raise UserInputError(f"{decisions.path}: game record has a bad configuration "
                             f"({err})") from None
    width = game.config.width
    tile_px = max(10, min(32, 560 // max(width, 1)))
    last = max(decisions.states)
    out: dict[int, bytes] = {}
    with tempfile.TemporaryDirectory(prefix="nlmcs-maps-") as tmp:
        for step, rec in sorted(decisions.states.items()):
            if step % every and step != last:
                continue
            try:
                state = game.state_from_json(rec["state"])
            except UserInputError as err:
                raise UserInputError(f"{decisions.path}: state of step {step}: {err}") from None
            path = render_png(state, Path(tmp) / f"step-{step}.png", tile_px=tile_px)
            out[step] = path.read_bytes()
    log.info("%s: drew %d maps", decisions.path, len(out))
    return out
