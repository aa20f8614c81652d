"""Actions as small integers, the compiled engine's currency, and back to `Action` objects.

Unit orders take 0..21 (a move or attack in direction d is MOVE0 + d or ATTACK0 + d); a city's
build of item i is BUILD0 + i (units first, then buildings, as `Tables.item_names`); research
of tech t is BUILD0 + n_items + t.
"""

from __future__ import annotations

from nlmcs.games.base import Action
from nlmcs.games.civ import tables as tb

MOVE0, ATTACK0 = 0, 8
FORTIFY, BUILD_CITY, IRRIGATE, MINE, BUILD_ROAD, WAIT = 16, 17, 18, 19, 20, 21
BUILD0 = 32

_UNIT_ORDERS = {FORTIFY: tb.FORTIFY, BUILD_CITY: tb.BUILD_CITY, IRRIGATE: tb.IRRIGATE,
                MINE: tb.MINE_ACTION, BUILD_ROAD: tb.BUILD_ROAD, WAIT: tb.WAIT}


def action_table(tables: tb.Tables) -> tuple[Action, ...]:
    """Code -> the reference engine's `Action` (the same shared objects where it has them)."""
    out: list[Action] = [tb.WAIT] * BUILD0
    for d in range(8):
        out[MOVE0 + d], out[ATTACK0 + d] = tb.MOVE[d], tb.ATTACK[d]
    for code, action in _UNIT_ORDERS.items():
        out[code] = action
    out.extend(Action("build", name) for name in tables.item_names)
    out.extend(Action("research", name) for name in tables.tech_names)
    return tuple(out)


def research0(tables: tb.Tables) -> int:
    return BUILD0 + len(tables.item_names)
