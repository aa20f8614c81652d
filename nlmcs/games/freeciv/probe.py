"""A bridge check: one short game against FreeCiv's AI with a fixed rule, over the protocol.

It starts a local server, joins as a player, starts the game and, every turn, has each settlers
unit ask to found a city where it stands (the server decides), then ends the turn. What the
server shows the player is recorded per turn (units, cities, known tiles, score, gold, research),
with the packets received. It tests the protocol layers end to end on a real server, with no
planner and no translation (those are `nlmcs.experiments.freeciv_play`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from nlmcs.files import write_csv_rows
from nlmcs.games.freeciv.client import Client
from nlmcs.games.freeciv.constants import ACTION_FOUND_CITY
from nlmcs.games.freeciv.packets_def import Protocol
from nlmcs.games.freeciv.server import FreeCivServer, ServerConfig
from nlmcs.games.freeciv.translate import research_of


def probe(*, proto: Protocol, config: ServerConfig, turns: int, out: Path | None = None,
          username: str = "nlmcs", log: Callable[[str], None] = print) -> list[dict]:
    """Play `turns` turns; returns one row per turn (and writes them as CSV to `out`)."""
    rows: list[dict] = []
    t0 = time.perf_counter()
    with FreeCivServer(config) as server, Client.connect(proto, "127.0.0.1", server.port) as client:
        client.join(username)
        server.command("start")
        view = client.view
        founded = 0
        while len(rows) < turns:
            name, _ = client.receive()
            if name != "PACKET_BEGIN_TURN":
                continue
            me = view.player_id
            settlers = _unit_types_named(view, "Settlers")
            for unit in list(view.units.values()):
                if unit.get("owner") == me and unit.get("type") in settlers:
                    founded += 1
                    client.send("PACKET_UNIT_DO_ACTION", actor_id=unit["id"],
                                target_id=unit["tile"], sub_tgt_id=0,
                                name=f"{username} {founded}",
                                action_type=ACTION_FOUND_CITY)  # fmt: skip
                    client.receive_until({"PACKET_PROCESSING_FINISHED"})
            player = view.players.get(me, {})
            research = research_of(view, me)
            row = {
                "turn": view.turn,
                "units": sum(1 for u in view.units.values() if u.get("owner") == me),
                "cities": sum(1 for c in view.cities.values() if c.get("owner") == me),
                "known_tiles": len(view.tiles),
                "score": player.get("score", 0),
                "gold": player.get("gold", 0),
                "techs": research.get("techs_researched", 0),
                "bulbs": research.get("bulbs_researched", 0),
                "packets": sum(view.received.values()),
                "packet_types": len(view.received),
                "seconds": round(time.perf_counter() - t0, 3),
            }
            rows.append(row)
            log(" ".join(f"{k} {v}" for k, v in row.items()))
            client.send("PACKET_PLAYER_PHASE_DONE", turn=view.turn)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        write_csv_rows(out, rows)
    return rows


def _unit_types_named(view, name: str) -> set[int]:
    return {t["id"] for t in view.unit_types.values() if t.get("rule_name") == name}
