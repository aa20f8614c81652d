"""ASCII view of a civ state: two characters per tile, then a short status per player.

First character: the terrain letter from the ruleset (ocean shown as '.'). Second character: a
city ('A' for player 0, 'B' for player 1, ...), else units ('a', 'b', ...), else '~' for a river,
'*' for a special resource, '+' for irrigation, '#' for a mine, '=' for a road, or a space.
"""

from __future__ import annotations

from nlmcs.games.civ.tables import IRRIGATION, MINE, ROAD


def render_ascii(s) -> str:
    m, T = s.map, s.tables
    idents = [("." if t.ocean else t.ident) for t in T.ruleset.terrains]
    lines = [f"turn {s.turn}/{s.max_turns}" + ("  (over)" if s.is_terminal() else "")]
    for y in range(m.height):
        row = []
        for x in range(m.width):
            t = y * m.width + x
            cid = s.city_at.get(t)
            if cid is not None:
                mark = chr(ord("A") + s.cities[cid].owner)
            elif t in s.tile_units:
                mark = chr(ord("a") + s.owner_at(t))
            elif m.riv[t]:
                mark = "~"
            elif m.res[t] >= 0:
                mark = "*"
            elif s.improvements[t] & MINE:
                mark = "#"
            elif s.improvements[t] & IRRIGATION:
                mark = "+"
            elif s.improvements[t] & ROAD:
                mark = "="
            else:
                mark = " "
            row.append(idents[m.terr[t]] + mark)
        lines.append("".join(row).rstrip())
    for p in range(s.num_players):
        st = s.stats(p)
        letter = chr(ord("A") + p)
        units: dict[str, int] = {}
        for u in s.units.values():
            if u.owner == p:
                name = T.unit_names[u.kind]
                units[name] = units.get(name, 0) + 1
        unit_text = ", ".join(f"{k} {v}" for k, v in sorted(units.items())) or "none"
        lines.append(f"player {p} ({letter}): score {st['score']:.1f}, cities {int(st['cities'])}, "
                     f"techs {int(st['techs'])}, gold {int(st['gold'])}; units: {unit_text}")
    if s.is_terminal():
        w = s.winner()
        lines.append("winner: " + ("none" if w is None else f"player {w}"))
    return "\n".join(lines)
