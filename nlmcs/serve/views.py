"""A game as the JSON the browser client draws: the engine's own state JSON plus what a player
needs to choose (each of the human's agents with its legal actions, each city's growth and
production, research), and a description of each move the opponent made.

Everything here reads the state and never changes it.
"""

from __future__ import annotations

from nlmcs.games.base import Action
from nlmcs.games.civ.cities import granary_size
from nlmcs.games.civ.legal import parse_agent
from nlmcs.games.civ.tables import DIRECTIONS

PLAYER_COLOURS = (("red", "#d62728"), ("blue", "#1f77b4"), ("orange", "#ff7f0e"),
                  ("purple", "#9467bd"))
"""Each seat's colour, by player number: the client draws units, cities and moves in it and
names it in the page's legend, so this is the one table of them."""


def player_colour(player: int) -> dict:
    name, hex_ = PLAYER_COLOURS[player % len(PLAYER_COLOURS)]
    return {"name": name, "hex": hex_}


def action_text(state, action: Action) -> str:
    """Words for an action, as the client's buttons and the opponent's move list show it."""
    kind, arg = action.kind, action.arg
    if kind in ("move", "attack") and isinstance(arg, int):
        return f"{kind} {DIRECTIONS[arg]}"
    if kind == "build" and isinstance(arg, str):
        T = state.tables
        cost = T.item_costs[T.item_by_name[arg]] if arg in T.item_by_name else None
        return f"build {arg}" + (f" ({cost} shields)" if cost is not None else "")
    if kind == "research":
        return f"research {arg}"
    return kind.replace("_", " ")


def _target(state, agent: str, action: Action) -> int | None:
    """The tile a move or attack heads for (its first step), for the client to highlight."""
    kind, key = parse_agent(agent)
    if kind != "unit" or action.kind not in ("move", "attack") or key not in state.units:
        return None
    return state.map.neighbors[state.units[key].tile][action.arg]


def agent_view(state, agent: str, acted: Action | None) -> dict:
    """One of the human's agents: what it is, where, and its legal actions now."""
    kind, key = parse_agent(agent)
    out: dict = {"agent": agent, "kind": kind,
                 "acted": None if acted is None else {"kind": acted.kind, "arg": acted.arg,
                                                      "text": action_text(state, acted)}}
    if kind == "unit":
        u = state.units[key]
        out.update(tile=u.tile, type=state.tables.unit_names[u.kind])
    elif kind == "city":
        out.update(tile=state.cities[key].tile)
    out["actions"] = [{"kind": a.kind, "arg": a.arg, "text": action_text(state, a),
                       "target": _target(state, agent, a)}
                      for a in state.legal_actions(agent)]
    return out


def city_view(state, city) -> dict:
    """Growth and production of one city, in the engine's numbers."""
    T = state.tables
    return {"id": city.id, "agent": city.aid, "owner": city.owner, "size": city.size,
            "food": city.food, "food_box": granary_size(state, city.size),
            "surplus_food": city.surplus_food, "shields": city.shields,
            "build": T.item_names[city.build], "build_cost": T.item_costs[city.build],
            "surplus_shield": city.surplus_shield, "trade": city.trade}


def research_view(state, player: int) -> dict:
    p = state.players[player]
    T = state.tables
    researching = T.tech_names[p.researching] if p.researching >= 0 else None
    return {"researching": researching, "bulbs": p.bulbs,
            "cost": T.tech_cost[p.researching] if p.researching >= 0 else None,
            "known": [T.tech_names[i] for i in range(len(T.tech_names)) if p.techs >> i & 1]}


def legend(state) -> dict:
    """Names behind the state JSON's letters and the unit types' strengths."""
    rules = state.tables.ruleset
    return {"terrain": {t.ident: t.name for t in rules.terrains},
            "units": {u.name: {"attack": u.attack, "defense": u.defense, "moves": u.move_rate,
                               "hp": u.hp} for u in rules.units}}


def describe_move(state, player: int, agent: str, action: Action, applied: bool,
                  before: dict) -> dict:
    """What one of the opponent's moves did, from `before` (`unit_before`) and the state now."""
    kind, key = parse_agent(agent)
    out = {"player": player, "agent": agent, "kind": action.kind, "arg": action.arg,
           "applied": applied, "text": action_text(state, action), **before}
    if kind == "unit":
        u = state.units.get(key)
        out["to"] = None if u is None else u.tile
        out["survived"] = u is not None
    return out


def unit_before(state, agent: str) -> dict:
    """A unit's type and tile before it acts (it may die or found a city acting)."""
    kind, key = parse_agent(agent)
    if kind == "unit" and key in state.units:
        u = state.units[key]
        return {"what": state.tables.unit_names[u.kind], "from": u.tile}
    if kind == "city" and key in state.cities:
        c = state.cities[key]
        return {"what": "city", "from": c.tile, "before": state.tables.item_names[c.build]}
    if kind == "civ" and 0 <= key < state.num_players:
        t = state.players[key].researching
        return {"what": "civilization", "from": None,
                "before": state.tables.tech_names[t] if t >= 0 else None}
    return {"what": agent, "from": None}


def worth_showing(move: dict) -> bool:
    """Opponent moves the player cares about: not waits, not a city or a civilization
    confirming what it already builds or researches."""
    if not move["applied"] or move["kind"] == "wait":
        return False
    return not (move["kind"] in ("build", "research") and move.get("before") == move["arg"])


def game_view(session) -> dict:
    """Everything the client shows of one game, from the human's seat."""
    s, me = session.state, session.human
    acting = s.agents(me) if not session.finished else []
    return {
        "id": session.id,
        "turn": s.turn,
        "max_turns": s.max_turns,
        "over": session.finished,
        "winner": s.winner(),
        "human": me,
        "players": [{"player": p, "kind": "human" if p == me else "opponent",
                     "name": "you" if p == me else session.opponent_name,
                     "colour": player_colour(p),
                     "score": round(float(s.score(p)), 2),
                     "stats": {k: round(float(v), 2) for k, v in s.stats(p).items()}}
                    for p in range(s.num_players)],
        "state": s.to_json(),
        "legend": legend(s),
        "cities": [city_view(s, c) for c in s.cities.values()],
        "research": research_view(s, me),
        "agents": [agent_view(s, a, session.acted.get(a)) for a in acting],
        "opponent_moves": [m for m in session.opponent_moves if worth_showing(m)],
    }
